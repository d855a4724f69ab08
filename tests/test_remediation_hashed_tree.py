"""Issue 22 §1-3 on a pip-compile tree of six hashed files pinning one package (tests/pipcompile_tree.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli
from pipcompile_tree import NAMES, tree

from planner import service
from planner.config import Settings
from planner.run.dispatch import dispatch


@pytest.fixture
def redis_advisory(tmp_path: Path) -> Path:
    root = tmp_path / "advisories"
    root.mkdir()
    record = {"id": "GHSA-8fww-64cx-x8p5", "modified": "2023-03-29T00:00:00Z", "aliases": ["CVE-2023-28858"],
              "summary": "redis-py race condition", "affected": [{
                  "package": {"ecosystem": "PyPI", "name": "redis"},
                  "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "4.5.0"}, {"fixed": "4.5.4"}]}]}]}
    (root / "GHSA-8fww-64cx-x8p5.json").write_text(json.dumps(record))
    return root


def test_six_hashed_files_fit_as_excerpts_and_every_command_is_named(
        home: Path, make_repo: Callable[..., Path], redis_advisory: Path) -> None:
    repo = make_repo(tree())
    state = dispatch(Settings.from_env(), "vulnerability-remediation", repo, {"package": "redis"},
                     {"advisories": str(redis_advisory)})
    [item] = state["outcomes"]
    assert item["status"] == "needs_regeneration", (item.get("error"), item["status"])
    fixes = sorted(b["fix"] for b in item["blockers"] if b["kind"] == "regenerate")
    assert len(fixes) == 6
    assert "cd requirements && pip-compile docs.in --upgrade-package 'redis==4.5.4'" in fixes
    assert ("pip-compile --allow-unsafe --generate-hashes --output-file=requirements/main.txt "
            "--resolver=backtracking requirements/main.in --upgrade-package 'redis==4.5.4'") in fixes
    assert not any("Make changes" in f for f in fixes)
    # The range in main.in already allows 4.5.4: left as written (no edit, no "major bump 2.8.0 → 4.5.4").
    assert "requirements/main.in" not in (state.get("patch") or "")
    assert "major" not in json.dumps(item["blockers"])


def test_item_bundle_loads_excerpts_not_whole_hashed_files(home: Path, make_repo: Callable[..., Path],
                                                          redis_advisory: Path) -> None:
    repo = make_repo(tree())
    service.gather_repo(Settings.from_env(), repo, options={"advisories": str(redis_advisory)})
    bundle, _, _ = service.build_bundle(Settings.from_env(), "vulnerability-remediation", repo, {"package": "redis"})
    excerpts = [e for e in bundle.entries if e.status == "excerpt"]
    assert sorted(e.target for e in excerpts) == sorted(f"requirements/{n}.txt" for n in NAMES)
    assert bundle.totals.tokens < bundle.totals.max_tokens
    main = bundle.files["requirements/main.txt"]
    assert main.startswith("@@ lines ") and "redis==4.5.3 \\" in main and "pkg-main-000" not in main


def test_over_budget_bundle_still_reports_target_advisories_and_commands(
        home: Path, make_repo: Callable[..., Path], redis_advisory: Path, tccm_dir: Callable[..., Path]) -> None:
    """The issue's layout as it was: whole hashed files in must_read (~80k tokens against 40k)."""
    tccm_dir({"vulnerability-remediation": """
        task_class: vulnerability-remediation
        version: whole-files
        extends: vulnerability-remediation
        must_read:
          - key: vulnerabilities[package=${inputs.package}]
          - key: dependencies.${inputs.package}
          - files_of: dependencies.${inputs.package}
        """})
    repo = make_repo(tree())
    state = dispatch(Settings.from_env(), "vulnerability-remediation", repo, {"package": "redis"},
                     {"advisories": str(redis_advisory)})
    [item] = state["outcomes"]
    assert item["status"] == "needs_regeneration", (item.get("error"), item["status"])
    assert len([b for b in item["blockers"] if b["kind"] == "regenerate"]) == 6
    assert any("over budget" in n for n in item["notes"])
    assert "4.5.4" in item["report"] and "GHSA-8fww-64cx-x8p5" in item["report"]


def test_bundle_preview_without_input_summarises_instead_of_failing(
        home: Path, make_repo: Callable[..., Path], redis_advisory: Path) -> None:
    """`dependencies.*` of ~800 packages is over the per-file cap: the preview says so, one line per package."""
    repo = make_repo(tree())
    service.gather_repo(Settings.from_env(), repo, options={"advisories": str(redis_advisory)})
    result = run_cli("bundle", "vulnerability-remediation", "--repo", str(repo), "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert any(e["status"] == "per_item" for e in out["entries"])
    [redis] = [line for line in out["overview"] if line.startswith("redis (PyPI)")]
    assert redis.startswith("redis (PyPI): declared in requirements/deploy.in:1, requirements/deploy.txt:")
    assert redis.endswith("(+9 more); installed 4.5.3; vulnerable: GHSA-8fww-64cx-x8p5")
    assert any(line.endswith("; not vulnerable") for line in out["overview"])
