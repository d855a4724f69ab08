"""One remediation item per upgrade unit when a package's findings span several parts of a monorepo."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from test_dispatch_remediation import osv

from planner.config import Settings
from planner.run.dispatch import dispatch
from subgraphs.vulnerability_remediation.work import split_findings, unit_of


def _advisories(tmp_path: Path) -> Path:
    root = tmp_path / "advisories"
    osv(root, "PYSEC-2023-62", "PyPI", "flask", [[{"introduced": "0"}, {"fixed": "2.2.5"}]])
    osv(root, "GHSA-35jh-r3h4-6jhm", "npm", "lodash", [[{"introduced": "0"}, {"fixed": "4.17.21"}]])
    return root


def test_two_apps_pinning_different_versions_are_two_items(home: Path, make_repo: Callable[..., Path],
                                                            tmp_path: Path) -> None:
    """awesome-compose's case: the minor bump of one app is no longer held back by the other's major bump."""
    repo = make_repo({"shop/requirements.txt": "Flask==2.0.1\n", "shop/app.py": "import flask\nflask.Flask('a')\n",
                      "legacy/requirements.txt": "Flask==1.1.1\n",
                      "legacy/app.py": "from flask import Flask\nFlask('b')\n"})
    state = dispatch(Settings.from_env(), "vulnerability-remediation", repo, {},
                     {"advisories": str(_advisories(tmp_path))})
    outcomes = {o["item"]["id"]: o for o in state["outcomes"]}
    assert set(outcomes) == {"PyPI:flask@legacy", "PyPI:flask@shop"}
    assert outcomes["PyPI:flask@shop"]["status"] == "succeeded"
    assert outcomes["PyPI:flask@legacy"]["status"] == "blocked"  # 1.1.1 → 2.2.5 crosses a major version
    assert "-Flask==2.0.1\n+Flask==2.2.5\n" in state["patch"] and "legacy/requirements.txt" not in state["patch"]
    assert state["status"] == "blocked"  # the run names the blocked one
    shop = outcomes["PyPI:flask@shop"]
    assert shop["item"]["data"]["unit"] == "shop" and "shop/app.py:2" in shop["report"]
    assert "legacy/app.py" in shop["report"].split("#### Elsewhere in the repository")[1]


def test_an_npm_workspace_is_one_unit(home: Path, make_repo: Callable[..., Path], tmp_path: Path) -> None:
    member = '{\n  "name": "%s",\n  "dependencies": {\n    "lodash": "4.17.20"\n  }\n}\n'
    lock = {"name": "root", "lockfileVersion": 3, "requires": True, "packages": {
        "": {"name": "root", "workspaces": ["packages/*"]},
        "packages/a": {"name": "a", "dependencies": {"lodash": "4.17.20"}},
        "packages/b": {"name": "b", "dependencies": {"lodash": "4.17.20"}},
        "node_modules/a": {"resolved": "packages/a", "link": True},
        "node_modules/b": {"resolved": "packages/b", "link": True},
        "node_modules/lodash": {"version": "4.17.20", "resolved": "https://r/lodash-4.17.20.tgz", "integrity": "x"}}}
    repo = make_repo({"package.json": '{"name": "root", "workspaces": ["packages/*"]}\n',
                      "packages/a/package.json": member % "a", "packages/b/package.json": member % "b",
                      "package-lock.json": json.dumps(lock, indent=2) + "\n"})
    state = dispatch(Settings.from_env(), "vulnerability-remediation", repo, {},
                     {"advisories": str(_advisories(tmp_path))})
    assert [o["item"]["id"] for o in state["outcomes"]] == ["npm:lodash"]  # the root lockfile covers both
    assert "packages/a/package.json" in state["patch"] and "packages/b/package.json" in state["patch"]


def test_units() -> None:
    locks = frozenset({"package-lock.json", "web/yarn.lock"})
    assert unit_of("packages/a/package.json", locks) == ""  # a workspace member: the root's lockfile
    assert unit_of("web/package.json", locks) == "web" and unit_of("web/yarn.lock", locks) == "web"
    assert unit_of("svc/requirements/base.txt", locks) == "svc"  # no lockfile: the project folder
    assert unit_of("requirements.txt", locks) == ""


def test_findings_are_split_only_when_each_names_its_files() -> None:
    a = {"id": "A", "files": ["x/requirements.txt:1", "y/requirements.txt:3"]}
    assert {u: [f["files"] for f in fs] for u, fs in split_findings([a], frozenset()).items()} == {
        "x": [["x/requirements.txt:1"]], "y": [["y/requirements.txt:3"]]}
    assert split_findings([a, {"id": "B", "files": []}], frozenset()) == {}  # B would be in no item: no split
