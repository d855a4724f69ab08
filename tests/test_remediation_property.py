"""Property (issue 16): for random pinned packages and random advisories, every package the gather marks
vulnerable gets a work item, and where a fixed version clears its advisories, a patch that pins it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conftest import commit_all
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.config import Settings
from planner.policy.versions import bump
from planner.run.dispatch import dispatch
from repocontext.lazyjson import plain
from repocontext.store import RepoContextStore

NAMES = ("alpha-pkg", "beta", "gamma-lib", "delta", "epsilon")
versions = st.builds(lambda a, b, c: f"{a}.{b}.{c}", st.integers(1, 3), st.integers(0, 4), st.integers(0, 9))
advisory = st.tuples(st.one_of(st.just("0"), versions), st.one_of(st.none(), versions))  # (introduced, fixed)
packages = st.dictionaries(st.sampled_from(NAMES), st.tuples(versions, st.lists(advisory, min_size=1, max_size=3)),
                           min_size=1, max_size=4)


def _write(repo: Path, osv: Path, chosen: dict[str, tuple[str, list[tuple[str, str | None]]]]) -> None:
    osv.mkdir()
    lines = []
    for n, (name, (pinned, records)) in enumerate(sorted(chosen.items())):
        lines.append(f"{name}=={pinned}\n")
        for m, (introduced, fixed) in enumerate(records):
            events = [{"introduced": introduced}, *([{"fixed": fixed}] if fixed else [])]
            record = {"id": f"PYSEC-2024-{n}{m}", "modified": "2024-01-01T00:00:00Z",
                      "affected": [{"package": {"ecosystem": "PyPI", "name": name},
                                    "ranges": [{"type": "ECOSYSTEM", "events": events}]}]}
            (osv / f"PYSEC-2024-{n}{m}.json").write_text(json.dumps(record))
    (repo / "requirements.txt").write_text("".join(lines))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chosen=packages)
def test_every_vulnerable_package_gets_an_item_and_a_patch_when_fixable(
        chosen: dict[str, tuple[str, list[tuple[str, str | None]]]], home: Path,
        make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"README.md": "x\n"}, commit=False)
    osv = repo.parent / f"{repo.name}-osv"
    _write(repo, osv, chosen)
    commit_all(repo)
    state = dispatch(Settings.from_env(), "vulnerability-remediation", repo, {}, {"advisories": str(osv)})
    context = RepoContextStore(Settings.from_env().home).load_lazy(repo)
    assert context is not None
    vulnerable = {plain(f)["package"] for f in context["vulnerabilities"].values()}
    outcomes = {o["item"]["data"]["package"]: o for o in state["outcomes"]}
    assert set(outcomes) == vulnerable  # every vulnerable package has an item, and nothing else does
    if vulnerable:
        assert state["status"] != "no_changes"
    for package, outcome in outcomes.items():
        target = outcome["item"]["data"]["target"]
        crosses = target and any(bump(v, target) == "major" for v in outcome["item"]["data"]["installed"])
        if crosses:  # the remediation policy (issue 14) refuses a major bump unless allow_major=true
            assert outcome["status"] == "blocked", outcome
            assert outcome["blockers"][-1]["kind"] == "policy" and f"+{package}==" not in state["patch"]
        elif target:
            assert outcome["status"] == "succeeded", outcome
            assert f"+{package}=={target}\n" in state["patch"]
        else:
            assert outcome["status"] == "blocked"  # no fixed version clears it: said, never "no changes"
            message = outcome["blockers"][0]["message"]  # said, naming the advisories without a fix when some
            assert "no named fixed version clears every advisory" in message or "names no fixed version" in message \
                or "name no fixed version" in message
