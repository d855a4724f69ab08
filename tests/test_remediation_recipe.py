"""The manifest-upgrade recipe on its own: when it matches, what it declines and why, what it plans."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from planner import service
from planner.config import Settings
from subgraphs.vulnerability_remediation import RECIPES, split_work

ADVISORY = {"id": "PYSEC-1", "modified": "2024-01-01T00:00:00Z", "aliases": ["CVE-1"],
            "affected": [{"package": {"ecosystem": "PyPI", "name": "requests"},
                          "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "2.31.0"}]}]}]}
NO_FIX = {"id": "PYSEC-2", "modified": "2024-01-01T00:00:00Z",
          "affected": [{"package": {"ecosystem": "PyPI", "name": "flask"},
                        "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}]}]}]}


def _bundle(home: Path, repo: Path, tmp_path: Path, inputs: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    advisories = tmp_path / "osv"
    advisories.mkdir(exist_ok=True)
    for record in (ADVISORY, NO_FIX):
        (advisories / f"{record['id']}.json").write_text(json.dumps(record))
    settings = Settings.from_env()
    service.gather_repo(settings, repo, options={"advisories": str(advisories)})
    return service.build_bundle(settings, "vulnerability-remediation", repo, inputs or {})[0]


def test_recipe_matches_plans_and_cites(home: Path, make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo({"requirements.txt": "requests==2.30.0\nflask==2.0.0\n"})
    bundle = _bundle(home, repo, tmp_path)
    items = {item.data["package"]: item for item in split_work(bundle, {})}
    recipe = RECIPES[0]
    assert recipe.ref == "manifest-upgrade@1" and recipe.task_class == "vulnerability-remediation"
    assert recipe.match(bundle, items["requests"]) is None
    plan = recipe.apply(bundle, items["requests"])
    edits = [(e.file, e.old, e.new) for e in plan.edits]
    assert edits == [("requirements.txt", "requests==2.30.0", "requests==2.31.0")]
    assert "should_read:2:requirements.txt" in plan.used_entries
    assert any(e.startswith("must_read:0:vulnerabilities") for e in plan.used_entries)
    assert recipe.match(bundle, items["flask"]) == "no named fixed version clears every advisory on this package"


def test_recipe_declines_when_the_manifest_is_not_in_the_bundle(home: Path, make_repo: Callable[..., Path],
                                                                tmp_path: Path) -> None:
    repo = make_repo({"requirements.txt": "requests==2.30.0\n"})
    bundle = _bundle(home, repo, tmp_path)
    item = split_work(bundle, {})[0]
    bundle.files.pop("requirements.txt")
    assert RECIPES[0].match(bundle, item) == "declaring file(s) not loaded in the bundle: requirements.txt"
