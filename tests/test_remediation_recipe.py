"""The manifest-upgrade recipe on its own: when it matches, what it declines and why, what it plans."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from planner import service
from planner.bundle.model import Bundle
from planner.chain.recipes import RepoFiles
from planner.chain.work import WorkItem
from planner.config import Settings
from repocontext.store import RepoContextStore
from subgraphs.vulnerability_remediation import RECIPES, list_work

ADVISORY = {"id": "PYSEC-1", "modified": "2024-01-01T00:00:00Z", "aliases": ["CVE-1"],
            "affected": [{"package": {"ecosystem": "PyPI", "name": "requests"},
                          "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "2.31.0"}]}]}]}
NO_FIX = {"id": "PYSEC-2", "modified": "2024-01-01T00:00:00Z",
          "affected": [{"package": {"ecosystem": "PyPI", "name": "flask"},
                        "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}]}]}]}


def _gathered(repo: Path, tmp_path: Path) -> Settings:
    advisories = tmp_path / "osv"
    advisories.mkdir(exist_ok=True)
    for record in (ADVISORY, NO_FIX):
        (advisories / f"{record['id']}.json").write_text(json.dumps(record))
    settings = Settings.from_env()
    service.gather_repo(settings, repo, options={"advisories": str(advisories)})
    return settings


def _item_and_bundle(settings: Settings, repo: Path, package: str) -> tuple[Bundle, WorkItem]:
    items = {i.data["package"]: i for i in list_work(RepoContextStore(settings.home).load_lazy(repo) or {}, {})}
    item = items[package]
    bundle = service.build_bundle(settings, "vulnerability-remediation", repo, item.inputs)[0]
    return bundle, item


def test_recipe_matches_plans_and_cites(home: Path, make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo({"requirements.txt": "requests==2.30.0\nflask==2.0.0\n"})
    settings = _gathered(repo, tmp_path)
    bundle, item = _item_and_bundle(settings, repo, "requests")
    recipe = RECIPES[0]
    assert recipe.ref == "manifest-upgrade@1" and recipe.task_class == "vulnerability-remediation"
    files = RepoFiles(repo, bundle)
    assert recipe.match(bundle, item, files) is None
    plan = recipe.apply(bundle, item, files)
    edits = [(e.file, e.old, e.new) for e in plan.edits]
    assert edits == [("requirements.txt", "requests==2.30.0", "requests==2.31.0")]
    assert "must_read:2:requirements.txt" in plan.used_entries  # files_of: dependencies.requests
    assert any(e.startswith("must_read:0:vulnerabilities") for e in plan.used_entries)
    assert files.reads == []  # the bundle held the whole file
    flask_bundle, flask = _item_and_bundle(settings, repo, "flask")
    assert recipe.match(flask_bundle, flask, RepoFiles(repo, flask_bundle)) == (  # an advisory without a fix
        "PYSEC-2 names no fixed version: no upgrade clears it; remove the dependency or accept the risk")


def test_recipe_reads_a_whole_file_the_bundle_holds_cut(home: Path, make_repo: Callable[..., Path],
                                                       tmp_path: Path) -> None:
    """The bundle's cut only limits what an LLM sees: the recipe edits the whole file, and says it read it."""
    repo = make_repo({"requirements.txt": "requests==2.30.0\n"})
    settings = _gathered(repo, tmp_path)
    bundle, item = _item_and_bundle(settings, repo, "requests")
    bundle.files["requirements.txt"] = "[cut]"
    entry = next(e for e in bundle.entries if e.target == "requirements.txt")
    entry.status = "truncated"
    files = RepoFiles(repo, bundle)
    plan = RECIPES[0].apply(bundle, item, files)
    assert [(e.old, e.new) for e in plan.edits] == [("requests==2.30.0", "requests==2.31.0")]
    assert files.reads == [{"file": "requirements.txt", "why": "the bundle holds a cut copy", "outcome": "read"}]
