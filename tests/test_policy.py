"""Decision surfaces: the shipped policies refuse what lies outside them, naming the rule; a child
narrows its parent's policy and may widen it only on purpose."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conftest import run_cli
from test_dispatch_remediation import osv

from planner.config import Settings
from planner.errors import ExitCode
from planner.policy.enforce import check_edits
from planner.policy.inherit import effective
from planner.policy.kinds import kind_of
from planner.policy.versions import bump, edit_bumps
from planner.run.dispatch import dispatch
from planner.store.provenance import ProvenanceStore
from planner.tccm.registry import Registry


def _advisories(tmp_path: Path) -> Path:
    root = tmp_path / "osv"
    osv(root, "GHSA-rq00-0000-0001", "PyPI", "requests", [[{"introduced": "0"}, {"fixed": "3.0.0"}]])
    return root


def test_remediation_never_crosses_a_major_version_unless_allowed(home: Path, tmp_path: Path,
                                                                  make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"requirements.txt": "requests==2.30.0\n"})
    options = {"advisories": str(_advisories(tmp_path))}
    state = dispatch(Settings.from_env(), "vulnerability-remediation", repo, {}, options)
    assert state["status"] == "blocked" and not state.get("patch")
    blocker = state["outcomes"][0]["blockers"][-1]
    assert blocker["kind"] == "policy" and blocker["fix"] == "pass --input allow_major=true to allow it"
    assert blocker["message"].startswith(
        "policy.version_bump (from vulnerability-remediation): requests 2.30.0 → 3.0.0 is a major bump")
    record = ProvenanceStore(Settings.from_env().home).get(state["run_id"])
    assert [(s.stage, s.outcome) for s in record.stages][-1] == ("policy", "refused")

    allowed = dispatch(Settings.from_env(), "vulnerability-remediation", repo, {"allow_major": "true"}, options)
    assert allowed["status"] == "succeeded" and "+requests==3.0.0" in allowed["patch"]
    assert "allow_major=true" in next(s for s in allowed["stages"] if s["stage"] == "policy")["reason"]


def test_a_disallowed_side_effect_is_refused(home: Path, tmp_path: Path, tccm_dir: Callable[..., Path],
                                             make_repo: Callable[..., Path]) -> None:
    tccm_dir({"quiet-remediation": """
        task_class: quiet-remediation
        version: 1
        extends: vulnerability-remediation
        policy: {side_effects: [apply]}
        """})
    osv(tmp_path / "osv", "PYSEC-2023-74", "PyPI", "requests", [[{"introduced": "0"}, {"fixed": "2.31.0"}]])
    repo = make_repo({"requirements.txt": "requests==2.30.0\n", "Makefile": "test:\n\ttrue\n"})
    state = dispatch(Settings.from_env(), "quiet-remediation", repo, {},
                     {"advisories": str(tmp_path / "osv"), "verify": True})
    assert state["status"] == "succeeded"
    assert state["verification"]["reason"] == ("refused by policy.side_effects (from quiet-remediation): side-effect "
                                               "'verify' is not allowed (allowed: apply)")


def test_a_flow_side_effect_outside_the_policy_is_a_validation_error(home: Path,
                                                                      tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"tester": """
        task_class: tester
        version: 1
        description: run the tests
        budget: {max_files: 5, max_tokens: 4000, per_file_max_tokens: 1000}
        policy: {side_effects: [apply]}
        flow:
          start: test
          states:
            test: {type: side-effect, effect: verify, next: end}
        """})
    result = run_cli("task-classes", "validate")
    assert result.returncode == ExitCode.INVALID
    assert "tester.yaml:9: flow.states.test.effect: policy.side_effects (from tester): side-effect 'verify' is " \
           "not allowed" in result.stderr


WIDER = """
task_class: wide-remediation
version: 1
extends: vulnerability-remediation
policy:
  file_kinds: [manifest, lockfile, source]
  version_bump: minor
"""


def test_a_widened_child_policy_is_a_validation_error_unless_declared(home: Path,
                                                                       tccm_dir: Callable[..., Path]) -> None:
    directory = tccm_dir({"wide-remediation": WIDER})
    result = run_cli("task-classes", "validate")
    assert result.returncode == ExitCode.INVALID
    assert "wide-remediation.yaml:5: policy.file_kinds: widens the parent's policy (adds source)" in result.stderr
    (directory / "wide-remediation.yaml").write_text(WIDER.lstrip() + "  widens: [file_kinds]\n")
    result = run_cli("task-classes", "validate")
    assert result.returncode == ExitCode.OK, result.stderr
    assert "widened on purpose: file_kinds (wide-remediation over vulnerability-remediation: adds source)" in \
        result.stdout + result.stderr
    surface = json.loads(run_cli("task-classes", "surface", "wide-remediation", "--json").stdout)
    assert surface["limits"]["file_kinds"]["value"] == ["manifest", "lockfile", "source"]
    assert surface["limits"]["version_bump"]["from"] == "wide-remediation"
    assert surface["widened"] and surface["relax"]["allow_major"] == {"version_bump": "major"}


def test_narrowing_is_fine_and_inherits_the_rest(home: Path, tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"narrow": """
        task_class: narrow
        version: 1
        extends: distroless-migration
        policy: {paths: ["api/Dockerfile*"], max_files_changed: 1}
        """})
    policy = Registry(Settings.from_env().task_class_dirs).get("narrow").policy
    assert policy is not None and policy.limits.file_kinds == ["dockerfile", "compose"]
    assert policy.origin["file_kinds"] == "distroless-migration" and policy.origin["paths"] == "narrow"
    edits = [{"file": "web/Dockerfile", "old": "a", "new": "b"}, {"file": "docker-compose.yml", "old": "a", "new": "b"}]
    rules = [v.rule for v in check_edits(policy, edits, {})]
    assert rules == ["policy.paths (from narrow)", "policy.reasoned_paths (from distroless-migration)",
                     "policy.paths (from narrow)", "policy.max_files_changed (from narrow)"]


def test_versions_kinds_and_relax() -> None:
    assert bump("2.30.0", "2.31.0") == "minor" and bump("3.2", "4.1.10") == "major" and bump("1.0", "1.0.0") is None
    assert edit_bumps("FROM python:3.11-slim", "FROM python:3.12-slim") == [("3.11", "3.12", "minor")]
    assert kind_of("web/package-lock.json") == "lockfile" and kind_of("requirements/dev.txt") == "manifest"
    assert kind_of("svc/api.Dockerfile") == "dockerfile" and kind_of("app/main.py") == "source"
    assert kind_of("deps/base.txt", {"deps/base.txt": "manifest"}) == "manifest"
    registry = Registry([Path(__file__).parents[1] / "task-class-contexts"])
    policy = registry.get("vulnerability-remediation").policy
    assert policy is not None
    relaxed, notes = effective(policy, {"allow_major": "true"})
    assert relaxed.limits.version_bump == "major" and notes


def test_version_bump_compares_what_is_installed_not_a_range_floor(home: Path) -> None:
    """Issue 22 §3: `redis>=2.8.0,<5.0.0`, installed 4.5.3, fix 4.5.4 is a patch bump, not 2.8.0 → 4.5.4."""
    policy = Registry(Settings.from_env().task_class_dirs).get("vulnerability-remediation").policy
    assert policy is not None
    item = {"data": {"package": "redis", "installed": ["4.5.3"], "target": "4.5.4"}}
    edits = [{"file": "requirements/main.in", "old": "redis>=2.8.0,<5.0.0\n", "new": "redis>=4.5.4,<5.0.0\n"}]
    known = {"requirements/main.in": "manifest"}
    assert check_edits(policy, edits, item, known) == []
    major = {"data": {"package": "redis", "installed": ["3.5.3"], "target": "4.5.4"}}
    assert [v.message for v in check_edits(policy, edits, major, known)] == ["redis 3.5.3 → 4.5.4 is a major bump; the "
                                                                      "limit is minor"]
