"""A vulnerable package is never "no changes" (issue 16): work items come from the gather's findings, never
from a rendered and possibly cut slice, and every vulnerable package gets a patch or says why not."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from planner.chain.work import ItemResult, WorkItem
from planner.config import Settings
from planner.patch.plan import Plan
from planner.run.dispatch import dispatch
from subgraphs.vulnerability_remediation.graph import never_unchanged

LONG = "A long advisory summary that makes every record weigh in the rendered slice. " * 6


def osv(root: Path, ident: str, package: str, events: list[dict[str, str]], ecosystem: str = "PyPI") -> None:
    root.mkdir(parents=True, exist_ok=True)
    record = {"id": ident, "modified": "2024-01-01T00:00:00Z", "summary": LONG,
              "affected": [{"package": {"ecosystem": ecosystem, "name": package},
                            "ranges": [{"type": "ECOSYSTEM", "events": events}]}]}
    (root / f"{ident}.json").write_text(json.dumps(record))


def _advisories(root: Path) -> Path:
    # django's entries sort after forty Pillow ones: a widened, cut slice used to lose them
    for n in range(40):
        osv(root, f"PYSEC-2021-{100 + n}", "pillow", [{"introduced": "0"}, {"fixed": f"8.{2 + n // 10}.{n % 10}"}])
    for n, fixed in enumerate(("2.2.24", "2.2.25", "2.2.26", "2.2.27", "2.2.28")):
        osv(root, f"PYSEC-2022-{900 + n}", "django", [{"introduced": "2.2"}, {"fixed": fixed}])
    for n, fixed in enumerate(("4.2.14", "4.2.15", "4.2.16")):
        osv(root, f"PYSEC-2024-{900 + n}", "django", [{"introduced": "4.2"}, {"fixed": fixed}])
    return root


def _dispatch(repo: Path, advisories: Path, **inputs: str) -> dict:
    return dispatch(Settings.from_env(), "vulnerability-remediation", repo, inputs, {"advisories": str(advisories)})


def test_package_input_narrows_to_that_package_and_patches_it(home: Path, make_repo: Callable[..., Path],
                                                              tmp_path: Path) -> None:
    advisories = _advisories(tmp_path / "osv")
    repo = make_repo({"requirements.txt": "Django==2.2.23\nPillow==8.1.1\n"})
    state = _dispatch(repo, advisories, package="django")
    assert state["status"] == "succeeded", state.get("outcomes")
    assert [o["item"]["id"] for o in state["outcomes"]] == ["PyPI:django"]
    assert "-Django==2.2.23\n+Django==2.2.28\n" in state["patch"] and "+Pillow" not in state["patch"]
    both = _dispatch(repo, advisories)
    assert sorted(o["item"]["id"] for o in both["outcomes"]) == ["PyPI:django", "PyPI:pillow"]
    assert "+Django==2.2.28\n" in both["patch"] and "+Pillow==8.5.9\n" in both["patch"]


def test_the_fix_is_found_whatever_the_slice_shows(home: Path, make_repo: Callable[..., Path],
                                                   tmp_path: Path) -> None:
    advisories = _advisories(tmp_path / "osv")
    repo = make_repo({"requirements.txt": "Django==4.2.13\n"})
    state = _dispatch(repo, advisories, package="django")
    assert state["status"] == "succeeded", state.get("outcomes")
    assert "+Django==4.2.16\n" in state["patch"]
    item = state["outcomes"][0]["item"]["data"]
    assert item["advisories"] == ["PYSEC-2024-900", "PYSEC-2024-901", "PYSEC-2024-902"]


def test_a_plan_that_edits_nothing_blocks_the_item() -> None:
    """A vulnerable package whose declarations cannot be edited is blocked, each declaration named."""
    item = WorkItem(id="Go:golang.org/x/text", title="x/text", data={"package": "golang.org/x/text"})
    plan = Plan(summary="Upgrade golang.org/x/text v0.3.7 → 0.3.8", source="recipe",
                data={"skipped": ["go.mod:5: golang.org/x/text is replaced by the local directory ./third_party"]})
    result = ItemResult(item=item, status="no_changes", plan=plan.model_dump())
    never_unchanged(result)
    assert result.status == "blocked" and result.error
    assert [(b.kind, b.file) for b in result.blockers] == [("not-edited", "go.mod")]
    bare = ItemResult(item=item, status="no_changes", plan=Plan(summary="Upgrade x", notes=["a note"]).model_dump())
    never_unchanged(bare)
    assert bare.status == "blocked" and bare.blockers[0].kind == "still-vulnerable" and "a note" in \
        bare.blockers[0].message
    done = ItemResult(item=item, status="succeeded", plan=plan.model_dump())
    never_unchanged(done)
    assert done.status == "succeeded" and not done.blockers


def test_a_package_filter_with_no_finding_says_why(home: Path, make_repo: Callable[..., Path],
                                                   tmp_path: Path) -> None:
    advisories = _advisories(tmp_path / "osv")
    repo = make_repo({"requirements.txt": "Django==2.2.23\n"})
    state = _dispatch(repo, advisories, package="flask")
    assert state["status"] == "no_changes" and state["outcomes"] == []
    assert "no vulnerable package matches package=flask; the gather found: django (PyPI)" in state["report"]


def test_a_transitive_package_is_fixed_through_its_hint_not_by_hand() -> None:
    """A package no manifest declares has no declaration to change: the blocker's fix is the hint (its parent,
    or the ecosystem's override), not "change the declaration by hand"."""
    from repocontext.model import Dependency
    from subgraphs.vulnerability_remediation.lockfiles import transitive_only
    from subgraphs.vulnerability_remediation.model import UpgradePlan

    upgrade = UpgradePlan(ecosystem="PyPI", package="urllib3", target="1.26.18")
    locked = Dependency(ecosystem="PyPI", name="urllib3", version="1.26.5", direct=False, path=["requests"],
                        file="poetry.lock", line=40, kind="lockfile")
    transitive_only(upgrade, [locked])
    item = WorkItem(id="PyPI:urllib3", title="urllib3", data={"package": "urllib3"})
    plan = Plan(summary="Upgrade urllib3 1.26.5 → 1.26.18", source="recipe", data={"skipped": upgrade.skipped})
    result = ItemResult(item=item, status="no_changes", plan=plan.model_dump())
    never_unchanged(result)
    [blocker] = result.blockers
    assert blocker.kind == "not-edited" and blocker.file == "poetry.lock"
    assert blocker.fix is not None and blocker.fix.startswith("`poetry update --lock urllib3`")
    assert "or upgrade requests" in blocker.fix and "by hand" not in blocker.fix
