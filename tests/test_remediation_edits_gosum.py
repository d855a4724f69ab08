"""plan_upgrade for a module only go.sum names (go.mod before Go 1.17): require it in go.mod, regenerate go.sum."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from test_deps_gosum import LOGRUS_MOD, LOGRUS_SUM
from test_remediation_edits import plan_for, write_back

YAML = "gopkg.in/yaml.v3"
FIXED = "3.0.0-20220521103104-8f96da9f5d5e"
LINE = f"{YAML} v{FIXED} // indirect"


@pytest.mark.parametrize(("gomod", "expected"), [
    (LOGRUS_MOD, LOGRUS_MOD.replace("require (\n", f"require (\n\t{LINE}\n")),  # first in the require block
    ("module m\n\ngo 1.15\n\nrequire github.com/stretchr/testify v1.7.0\n",
     f"module m\n\ngo 1.15\n\nrequire {LINE}\n\nrequire github.com/stretchr/testify v1.7.0\n"),  # after go
    ("module m\n", f"module m\n\nrequire {LINE}\n"),  # no go line: after the module line
])
def test_a_go_sum_only_module_is_required_in_go_mod(make_repo: Callable[..., Path], gomod: str,
                                                    expected: str) -> None:
    repo = make_repo({"go.mod": gomod, "go.sum": LOGRUS_SUM})
    plan, after = plan_for(repo, "Go", YAML, FIXED)
    assert after == {"go.mod": expected} and plan.skipped == []
    assert [(a.file, a.command) for a in plan.regenerate] == [("go.sum", "go mod tidy")]
    assert "named in go.sum, as go.mod predates Go 1.17" in plan.edits[0].reason
    assert all("\n" not in note for note in plan.notes)  # the added line is shown on one line
    write_back(repo, after)  # once required, it is an ordinary go.mod declaration
    again, none = plan_for(repo, "Go", YAML, FIXED)
    assert none == {} and again.skipped == []


def test_a_go_sum_only_module_already_fixed_is_left(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"go.mod": LOGRUS_MOD, "go.sum": LOGRUS_SUM})
    plan, after = plan_for(repo, "Go", YAML, "3.0.0-20200101000000-000000000000")
    assert after == {} and plan.regenerate == [] and "already" in plan.notes[0]


def test_a_new_major_version_is_not_a_go_mod_line(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"go.mod": LOGRUS_MOD, "go.sum": LOGRUS_SUM})
    plan, after = plan_for(repo, "Go", "github.com/pmezard/go-difflib", "2.0.0")
    assert after == {} and "new module path" in plan.skipped[0]


def test_dispatch_remediates_logrus_1_9_0s_yaml_v3(make_repo: Callable[..., Path], home: Path,
                                                     tmp_path: Path) -> None:
    """The real case: logrus 1.9.0 (go 1.13) builds gopkg.in/yaml.v3 affected by GO-2022-0603."""
    import json
    import subprocess

    from planner.config import Settings
    from planner.run.dispatch import dispatch

    advisories = tmp_path / "osv"
    advisories.mkdir()
    (advisories / "GO-2022-0603.json").write_text(json.dumps({
        "id": "GO-2022-0603", "modified": "2024-05-20T16:03:47Z", "aliases": ["CVE-2022-28948"],
        "affected": [{"package": {"name": YAML, "ecosystem": "Go"},
                      "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": FIXED}]}]}]}))
    repo = make_repo({"go.mod": LOGRUS_MOD, "go.sum": LOGRUS_SUM, "logrus.go": "package logrus\n"})
    state = dispatch(Settings.from_env(), "vulnerability-remediation", repo, {}, {"advisories": str(advisories)})
    assert state["status"] == "needs_regeneration"
    item = state["outcomes"][0]
    assert item["item"]["data"]["findings"][0]["files"] == ["go.sum:12"]
    assert f"+\t{LINE}\n" in state["patch"] and "go mod tidy" in item["report"]
    assert f"### Upgrade {YAML} v3.0.0-20200313102051-9f266ea9e77c → v{FIXED} (Go)" in item["report"]
    (tmp_path / "fix.diff").write_text(state["patch"])
    subprocess.run(["git", "-C", str(repo), "apply", "--check", str(tmp_path / "fix.diff")], check=True)


def test_two_go_sum_only_modules_are_both_required(make_repo: Callable[..., Path], home: Path,
                                                    tmp_path: Path) -> None:
    """Each item inserts its own line; the anchor (the require block's first line) is never edited, so the
    insertions apply together in one patch."""
    import json
    import subprocess

    from planner.config import Settings
    from planner.run.dispatch import dispatch

    advisories = tmp_path / "osv"
    advisories.mkdir()
    for ident, module, fixed in (("GO-2022-0603", YAML, FIXED), ("GO-2099-0001", "github.com/pmezard/go-difflib",
                                                                  "1.0.1")):
        (advisories / f"{ident}.json").write_text(json.dumps({
            "id": ident, "modified": "2024-05-20T16:03:47Z",
            "affected": [{"package": {"name": module, "ecosystem": "Go"},
                          "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": fixed}]}]}]}))
    repo = make_repo({"go.mod": LOGRUS_MOD, "go.sum": LOGRUS_SUM, "logrus.go": "package logrus\n"})
    state = dispatch(Settings.from_env(), "vulnerability-remediation", repo, {}, {"advisories": str(advisories)})
    assert state["status"] == "needs_regeneration", [o["error"] for o in state["outcomes"]]
    assert [o["status"] for o in state["outcomes"]] == ["needs_regeneration"] * 2
    assert f"+\t{LINE}\n" in state["patch"]
    assert "+\tgithub.com/pmezard/go-difflib v1.0.1 // indirect\n" in state["patch"]
    (tmp_path / "fix.diff").write_text(state["patch"])
    subprocess.run(["git", "-C", str(repo), "apply", "--check", str(tmp_path / "fix.diff")], check=True)
