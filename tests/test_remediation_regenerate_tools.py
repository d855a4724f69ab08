"""`--regenerate` with the real package managers: the regenerated lockfile, read back into the patch.

Each test skips, saying why, when its tool is not on PATH or its package index cannot be reached. The Go
test needs no network: it serves two versions of a module from a directory (GOPROXY=file://), which the
real `go get` / `go mod tidy` read like any module proxy.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.request
import zipfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from conftest import commit_all, git
from test_dispatch_remediation import osv

from planner.config import Settings
from planner.run.dispatch import dispatch
from repocontext.deps.npm_lock import parse_package_lock
from repocontext.deps.pnpm_lock import parse_pnpm_lock
from repocontext.deps.yarn_lock import parse_yarn_lock

PARSERS = {"package-lock.json": lambda t: parse_package_lock("package-lock.json", t, None),
           "yarn.lock": lambda t: parse_yarn_lock("yarn.lock", t, None),
           "pnpm-lock.yaml": lambda t: parse_pnpm_lock("pnpm-lock.yaml", t)}

NPM_PING = "https://registry.npmjs.org/-/ping"
PYPI = "https://pypi.org/simple/requests/"


@cache
def _reachable(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=8) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def needs(tool: str, index: str | None = None) -> str:
    """The tool's path, or skip the test saying what is missing."""
    found = shutil.which(tool)
    if found is None:
        pytest.skip(f"{tool} is not installed (not on PATH)")
    if index is not None and not _reachable(index):
        pytest.skip(f"the package index {index} cannot be reached from here")
    return found


def sh(cwd: Path, command: str) -> str:
    done = subprocess.run(["sh", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0 and any(w in done.stdout + done.stderr for w in ("ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT")):
        pytest.skip(f"`{command}` could not reach its index: {(done.stdout + done.stderr).strip()[-200:]}")
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def run(repo: Path, advisories: Path) -> dict:
    state = dispatch(Settings.from_env(), "vulnerability-remediation", repo, {},
                     {"advisories": str(advisories), "regenerate": True})
    for result in state["outcomes"]:
        for blocker in result["blockers"]:
            if "could not be reached" in blocker["message"]:
                pytest.skip(f"the index went away mid-test: {blocker['message']}")
    return state


def applied(repo: Path, patch: str, rel: str) -> str:
    """`rel` after `git apply` of the patch onto a clone (the repository itself is left alone)."""
    (repo / "fix.patch").write_text(patch)
    git(repo, "apply", "--check", "fix.patch")
    clone = repo.parent / f"{repo.name}-applied"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    git(clone, "apply", str(repo / "fix.patch"))
    return (clone / rel).read_text()


@pytest.fixture
def advisories(tmp_path: Path) -> Path:
    root = tmp_path / "advisories"
    osv(root, "GHSA-35jh-r3h4-6jhm", "npm", "lodash", [[{"introduced": "0"}, {"fixed": "4.17.21"}]])
    osv(root, "TEST-MS-0001", "npm", "ms", [[{"introduced": "0"}, {"fixed": "2.1.0"}]])
    osv(root, "PYSEC-2023-74", "PyPI", "requests", [[{"introduced": "2.3.0"}, {"fixed": "2.31.0"}]])
    osv(root, "GO-TEST-0001", "Go", "example.com/lib", [[{"introduced": "0"}, {"fixed": "1.0.1"}]])
    return root


def _js_repo(make_repo: Callable[..., Path], make_lock: str, extra: dict[str, str] | None = None) -> Path:
    manifest = {"name": "web", "version": "1.0.0", "private": True, "dependencies": {"lodash": "4.17.20"},
                **(extra or {})}
    repo = make_repo({"package.json": json.dumps(manifest, indent=2) + "\n"}, commit=False)
    sh(repo, make_lock)
    commit_all(repo)
    return repo


def _check_js(repo: Path, state: dict, lockfile: str) -> None:
    [result] = [r for r in state["outcomes"] if r["item"]["id"] == "npm:lodash"]
    assert (result["status"], result["blockers"]) == ("succeeded", []), result["notes"]
    assert state["status"] == "succeeded"
    assert f"diff --git a/{lockfile} b/{lockfile}" in state["patch"]
    after = PARSERS[lockfile](applied(repo, state["patch"], lockfile))
    assert [(d.name, d.version) for d in after.deps if d.name == "lodash"] == [("lodash", "4.17.21")]
    assert "4.17.21" not in (repo / lockfile).read_text()  # regenerated in a copy


def test_npm_install_package_lock_only(home: Path, make_repo: Callable[..., Path], advisories: Path) -> None:
    needs("npm", NPM_PING)
    repo = _js_repo(make_repo, "npm install --package-lock-only --ignore-scripts")
    state = run(repo, advisories)
    _check_js(repo, state, "package-lock.json")
    assert not (repo / "node_modules").exists()


def test_npm_with_an_unreachable_index(home: Path, make_repo: Callable[..., Path], advisories: Path,
                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No network needed: the registry is a closed local port, and the cache is empty."""
    needs("npm")
    manifest = '{\n  "name": "web",\n  "dependencies": {\n    "lodash": "4.17.20"\n  }\n}\n'
    lock = {"name": "web", "lockfileVersion": 3, "requires": True,
            "packages": {"": {"name": "web", "dependencies": {"lodash": "4.17.20"}},
                         "node_modules/lodash": {"version": "4.17.20", "integrity": "sha512-x"}}}
    repo = make_repo({"package.json": manifest, "package-lock.json": json.dumps(lock, indent=2) + "\n"})
    for name, value in {"npm_config_registry": "http://127.0.0.1:9/", "npm_config_cache": str(tmp_path / "cache"),
                        "npm_config_fetch_retries": "0", "npm_config_offline": "false"}.items():
        monkeypatch.setenv(name, value)
    state = dispatch(Settings.from_env(), "vulnerability-remediation", repo, {},
                     {"advisories": str(advisories), "regenerate": True})
    [result] = state["outcomes"]
    assert (state["status"], result["status"]) == ("needs_regeneration", "needs_regeneration")
    [blocker] = result["blockers"]
    assert blocker["message"].startswith("the package index could not be reached (npm exited 1): ")
    # the index the operator named is on loopback: the egress proxy refuses it, and the reason says so
    assert "egress proxy refused 127.0.0.1:9 (loopback)" in blocker["message"] and "\n" not in blocker["message"]
    assert "package-lock.json" not in state["patch"]


def test_a_capped_transitive_package_is_forced_by_a_scoped_override(home: Path, make_repo: Callable[..., Path],
                                                                     advisories: Path) -> None:
    """debug 2.6.9 pins ms 2.0.0: `npm update ms` would exit 0 and leave it, so it is never the command; an
    override scoped to debug is added to package.json and `npm install --package-lock-only` reaches the fix
    (tests/test_npm_parents.py: the ranges and the report)."""
    needs("npm", NPM_PING)
    repo = _js_repo(make_repo, "npm install --package-lock-only --ignore-scripts",
                    {"dependencies": {"debug": "2.6.9"}})
    state = run(repo, advisories)
    [result] = [r for r in state["outcomes"] if r["item"]["id"] == "npm:ms"]
    assert (result["status"], result["blockers"]) == ("succeeded", []), result["notes"]
    assert [r["command"] for r in result["plan"]["data"]["regeneration"]] == ["npm install --package-lock-only"]
    assert '+  "overrides": {\n+    "debug": {\n+      "ms": "2.1.0"\n+    }\n+  },' in state["patch"]
    after = PARSERS["package-lock.json"](applied(repo, state["patch"], "package-lock.json"))
    assert [(d.name, d.version) for d in after.deps if d.name == "ms"] == [("ms", "2.1.0")]


def test_yarn(home: Path, make_repo: Callable[..., Path], advisories: Path, tmp_path: Path) -> None:
    """Yarn 1 or Berry, whichever is installed: the command differs (see lockfiles.lock_command)."""
    needs("yarn", NPM_PING)
    classic = sh(tmp_path, "yarn --version").strip().startswith("1.")
    repo = _js_repo(make_repo, "yarn install --ignore-scripts" if classic
                    else "touch yarn.lock && yarn install --mode=update-lockfile")
    state = run(repo, advisories)
    _check_js(repo, state, "yarn.lock")
    expected = "yarn install --ignore-scripts" if classic else "yarn install --mode=update-lockfile"
    assert [r["command"] for r in state["outcomes"][0]["plan"]["data"]["regeneration"]] == [expected]


def test_pnpm(home: Path, make_repo: Callable[..., Path], advisories: Path) -> None:
    needs("pnpm", NPM_PING)
    repo = _js_repo(make_repo, "pnpm install --lockfile-only")
    _check_js(repo, run(repo, advisories), "pnpm-lock.yaml")


def test_uv_lock(home: Path, make_repo: Callable[..., Path], advisories: Path) -> None:
    needs("uv", PYPI)
    pyproject = ('[project]\nname = "svc"\nversion = "1.0"\nrequires-python = ">=3.11"\n'
                 'dependencies = ["requests==2.30.0"]\n')
    repo = make_repo({"pyproject.toml": pyproject}, commit=False)
    sh(repo, "uv lock --quiet")
    commit_all(repo)
    state = run(repo, advisories)
    [result] = state["outcomes"]
    assert (result["status"], result["blockers"]) == ("succeeded", []), result["notes"]
    after = applied(repo, state["patch"], "uv.lock")
    assert 'name = "requests"\nversion = "2.31.0"' in after


def _go_proxy(root: Path) -> str:
    """A module proxy in a directory: example.com/lib v1.0.0 and v1.0.1, in the layout `go` reads."""
    folder = root / "example.com/lib/@v"
    folder.mkdir(parents=True)
    versions = ["v1.0.0", "v1.0.1"]
    for version in versions:
        mod = "module example.com/lib\n\ngo 1.18\n"
        (folder / f"{version}.mod").write_text(mod)
        (folder / f"{version}.info").write_text(json.dumps({"Version": version, "Time": "2024-01-01T00:00:00Z"}))
        with zipfile.ZipFile(folder / f"{version}.zip", "w") as archive:
            archive.writestr(f"example.com/lib@{version}/go.mod", mod)
            archive.writestr(f"example.com/lib@{version}/lib.go",
                             f'package lib\n\nfunc Version() string {{ return "{version}" }}\n')
    (folder / "list").write_text("\n".join(versions) + "\n")
    return f"file://{root}"


def test_go_get_and_mod_tidy(home: Path, make_repo: Callable[..., Path], advisories: Path, tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    needs("go")
    for name, value in {"GOPROXY": _go_proxy(tmp_path / "proxy"), "GOSUMDB": "off", "GOFLAGS": "-mod=mod",
                        "GOPATH": str(tmp_path / "gopath"), "GOCACHE": str(tmp_path / "gocache"),
                        "GOTOOLCHAIN": "local", "GO111MODULE": "on"}.items():
        monkeypatch.setenv(name, value)
    main = 'package main\n\nimport "example.com/lib"\n\nfunc main() { println(lib.Version()) }\n'
    repo = make_repo({"go.mod": "module example.com/app\n\ngo 1.18\n\nrequire example.com/lib v1.0.0\n",
                      "main.go": main}, commit=False)
    sh(repo, "go mod tidy")
    commit_all(repo)
    state = run(repo, advisories)
    [result] = state["outcomes"]
    assert (result["status"], result["blockers"]) == ("succeeded", []), result["notes"]
    assert [r["command"] for r in result["plan"]["data"]["regeneration"]] == [
        "go get example.com/lib@v1.0.1 && go mod tidy"]
    go_sum = applied(repo, state["patch"], "go.sum")
    assert "example.com/lib v1.0.1 h1:" in go_sum and "v1.0.0" not in go_sum
    clone = repo.parent / f"{repo.name}-applied"
    monkeypatch.setenv("GOFLAGS", "-mod=readonly")  # go.sum must already hold every hash the build needs
    sh(clone, "go build ./...")
