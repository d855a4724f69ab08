"""Lockfile regeneration without a network: needs_regeneration and its blockers, exit 7, the reasons a
command did not run, and the plumbing (copy, read-back, whole-file edit, patch) with a local script.

Real package managers are exercised in test_remediation_regenerate_tools.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git, run_cli
from test_dispatch_remediation import osv

from planner.config import Settings
from planner.errors import ExitCode
from planner.run.dispatch import dispatch

# Exact pins: a range that already allows the fix beside this lock is left as written (only the lock moves,
# issue 22 §3); these tests are about the plumbing around a tool that rewrites a lock after a manifest edit.
PACKAGE_JSON = '{\n  "name": "web",\n  "version": "1.0.0",\n  "dependencies": {\n    "lodash": "4.17.20"\n  }\n}\n'


def lock(lodash: str = "4.17.20", minimist: str | None = None) -> str:
    """A package-lock.json v3 locking lodash (and minimist) at the given versions."""
    deps = {"lodash": "4.17.20", **({"minimist": "1.2.5"} if minimist else {})}
    packages = {"": {"name": "web", "version": "1.0.0", "dependencies": deps},
                "node_modules/lodash": {"version": lodash, "integrity": f"sha512-lodash-{lodash}"}}
    if minimist:
        packages["node_modules/minimist"] = {"version": minimist, "integrity": f"sha512-minimist-{minimist}"}
    return json.dumps({"name": "web", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
                       "packages": packages}, indent=2) + "\n"


# A stand-in for npm that does what `npm install --package-lock-only` does to these files: the lock follows
# package.json's ranges. It only tests the plumbing around a tool; real tools are tested elsewhere.
FAKE_NPM = """\
#!/bin/sh
echo "fake npm $*" >&2
[ "$1 $2" = "install --package-lock-only" ] || exit 3
if grep -q '"lodash": "4.17.21"' package.json; then
  sed -i 's/"version": "4.17.20"/"version": "4.17.21"/; s/sha512-lodash-4.17.20/sha512-lodash-4.17.21/' \\
    package-lock.json
fi
if grep -q '"minimist": "1.2.6"' package.json; then
  sed -i 's/"version": "1.2.5"/"version": "1.2.6"/; s/sha512-minimist-1.2.5/sha512-minimist-1.2.6/' \\
    package-lock.json
fi
"""


@pytest.fixture
def advisories(tmp_path: Path) -> Path:
    root = tmp_path / "advisories"
    osv(root, "GHSA-35jh-r3h4-6jhm", "npm", "lodash", [[{"introduced": "0"}, {"fixed": "4.17.21"}]])
    osv(root, "GHSA-xvch-5gv4-984h", "npm", "minimist", [[{"introduced": "0"}, {"fixed": "1.2.6"}]])
    return root


def tool_dir(tmp_path: Path, scripts: dict[str, str], keep: tuple[str, ...] = ("sh", "git", "sed", "grep",
                                                                                 "sleep")) -> str:
    """A PATH holding only `scripts` and links to the few real programs the run itself needs."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for name in keep:
        real = subprocess.run(["sh", "-c", f"command -v {name}"], capture_output=True, text=True).stdout.strip()
        if real and not (folder / name).exists():
            (folder / name).symlink_to(real)
    for name, text in scripts.items():
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)
    return str(folder)


def run(repo: Path, advisories: Path, **options: object) -> dict:
    return dispatch(Settings.from_env(), "vulnerability-remediation", repo, {},
                    {"advisories": str(advisories), **options})


def items(state: dict) -> dict[str, dict]:
    return {r["item"]["id"]: r for r in state["outcomes"]}


def test_without_regenerate_the_item_needs_regeneration(home: Path, make_repo: Callable[..., Path],
                                                        advisories: Path) -> None:
    repo = make_repo({"web/package.json": PACKAGE_JSON, "web/package-lock.json": lock()})
    state = run(repo, advisories)
    assert state["status"] == "needs_regeneration"
    result = items(state)["npm:lodash"]
    assert result["status"] == "needs_regeneration"
    assert [(b["kind"], b["file"], b["fix"]) for b in result["blockers"]] == [
        ("regenerate", "web/package-lock.json", "cd web && npm install --package-lock-only")]
    assert result["blockers"][0]["message"].startswith("the manifest it locks was edited and it locks lodash 4.17.20")
    assert "diff --git a/web/package.json" in state["patch"] and "package-lock.json" not in state["patch"]
    assert ("- `web/package-lock.json`: NOT regenerated (not run): pass --regenerate to run it (sandboxed in a "
            "throwaway copy, registry network only). Command: `cd web && npm install --package-lock-only`"
            ) in state["report"]
    assert "(lockfiles need regeneration)" in state["report"]


def test_cli_exit_code_7_and_json_blockers(home: Path, make_repo: Callable[..., Path], advisories: Path) -> None:
    repo = make_repo({"package.json": PACKAGE_JSON, "package-lock.json": lock()})
    result = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(advisories),
                     "--json")
    assert result.returncode == ExitCode.NEEDS_REGENERATION == 7, result.stderr
    out = json.loads(result.stdout)
    assert out["status"] == "needs_regeneration"
    [item] = out["items"]
    assert item["status"] == "needs_regeneration"
    assert [(b["kind"], b["file"], b["fix"]) for b in item["blockers"]] == [
        ("regenerate", "package-lock.json", "npm install --package-lock-only")]


def test_tool_not_installed(home: Path, make_repo: Callable[..., Path], advisories: Path,
                            monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    repo = make_repo({"package.json": PACKAGE_JSON, "package-lock.json": lock()})
    monkeypatch.setenv("PATH", tool_dir(tmp_path, {}))
    state = run(repo, advisories, regenerate=True)
    result = items(state)["npm:lodash"]
    assert (state["status"], result["status"]) == ("needs_regeneration", "needs_regeneration")
    assert [(b["message"], b["fix"]) for b in result["blockers"]] == [
        ("npm is not installed (not found on PATH)", "npm install --package-lock-only")]
    assert "package-lock.json" not in state["patch"]
    assert (repo / "package-lock.json").read_text() == lock()  # nothing hand-edited, the tree untouched


def test_failing_command_says_why_in_one_line(home: Path, make_repo: Callable[..., Path], advisories: Path,
                                              monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    failing = "#!/bin/sh\necho 'npm ERR! code E404' >&2\necho 'npm ERR! 404 Not Found - GET lodash' >&2\nexit 1\n"
    repo = make_repo({"package.json": PACKAGE_JSON, "package-lock.json": lock()})
    monkeypatch.setenv("PATH", tool_dir(tmp_path, {"npm": failing}))
    state = run(repo, advisories, regenerate=True)
    [blocker] = items(state)["npm:lodash"]["blockers"]
    assert blocker["message"] == "npm failed (exit 1): npm ERR! 404 Not Found - GET lodash"
    unreachable = ("#!/bin/sh\necho 'npm ERR! code ECONNREFUSED' >&2\n"
                   "echo 'npm ERR! request to https://r/ failed'\nexit 1\n")
    monkeypatch.setenv("PATH", tool_dir(tmp_path, {"npm": unreachable}))
    state = run(repo, advisories, regenerate=True)
    [blocker] = items(state)["npm:lodash"]["blockers"]
    assert blocker["message"] == ("the package index could not be reached (npm exited 1): npm ERR! request to "
                                  "https://r/ failed")
    assert "regenerate package-lock.json: `npm install --package-lock-only` failed (exit 1" in "\n".join(
        items(state)["npm:lodash"]["notes"])


def test_timeout_kills_the_tool(home: Path, make_repo: Callable[..., Path], advisories: Path,
                                monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    repo = make_repo({"package.json": PACKAGE_JSON, "package-lock.json": lock()})
    monkeypatch.setenv("PATH", tool_dir(tmp_path, {"npm": "#!/bin/sh\nsleep 60 &\nsleep 60\n"}))
    started = time.monotonic()
    state = run(repo, advisories, regenerate=True, regenerate_timeout=1)
    assert time.monotonic() - started < 30  # the background child did not keep the pipe open
    [blocker] = items(state)["npm:lodash"]["blockers"]
    assert blocker["message"] == "npm timed out after 1 s"


def test_plumbing_with_a_local_script(home: Path, make_repo: Callable[..., Path], advisories: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The 'tool' is a script committed in the repo: the copy, the read-back, the whole-file edit, the patch."""
    repo = make_repo({"package.json": PACKAGE_JSON, "package-lock.json": lock(), "tools/npm": FAKE_NPM})
    (repo / "tools/npm").chmod(0o755)
    monkeypatch.setenv("PATH", f"{repo / 'tools'}{os.pathsep}{os.environ['PATH']}")
    state = run(repo, advisories, regenerate=True)
    result = items(state)["npm:lodash"]
    assert (state["status"], result["status"], result["blockers"]) == ("succeeded", "succeeded", [])
    assert '-      "version": "4.17.20",\n-      "integrity": "sha512-lodash-4.17.20"\n' in state["patch"]
    whole = [e for e in result["edits"] if e["file"] == "package-lock.json"]
    assert [(e["old"], e["new"], e["line"]) for e in whole] == [(lock(), lock("4.17.21"), None)]
    assert whole[0]["reason"] == "regenerated by `npm install --package-lock-only`"
    assert (repo / "package-lock.json").read_text() == lock()  # ran in a copy
    (repo / "fix.patch").write_text(state["patch"])
    git(repo, "apply", "--check", "fix.patch")
    [note] = [n for n in result["notes"] if n.startswith("regenerate ")]
    assert note.startswith("regenerate package-lock.json: `npm install --package-lock-only` regenerated (exit 0, ")
    assert "- `package-lock.json`: regenerated, exit 0 in " in state["report"]


def test_a_lock_that_still_locks_the_old_version_is_named(home: Path, make_repo: Callable[..., Path],
                                                          advisories: Path, monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    repo = make_repo({"package.json": PACKAGE_JSON, "package-lock.json": lock()})
    monkeypatch.setenv("PATH", tool_dir(tmp_path, {"npm": "#!/bin/sh\necho 'up to date'\n"}))
    state = run(repo, advisories, regenerate=True)
    result = items(state)["npm:lodash"]
    assert result["status"] == "needs_regeneration"
    [blocker] = result["blockers"]
    assert (blocker["kind"], blocker["file"], blocker["line"]) == ("still-locked", "package-lock.json", 14)
    assert blocker["message"] == ("after `npm install --package-lock-only`, package-lock.json still locks lodash "
                                  "4.17.20, below 4.17.21: what depends on it does not allow the fixed version")
    assert '"overrides": {"lodash": "^4.17.21"}' in blocker["fix"]


def test_two_items_regenerating_one_lockfile(home: Path, make_repo: Callable[..., Path], advisories: Path,
                                             monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each item regenerates in its own copy; the later one keeps its manifest edit and names the command."""
    manifest = PACKAGE_JSON.replace('"4.17.20"\n', '"4.17.20",\n    "minimist": "1.2.5"\n')
    repo = make_repo({"package.json": manifest, "package-lock.json": lock(minimist="1.2.5")})
    monkeypatch.setenv("PATH", tool_dir(tmp_path, {"npm": FAKE_NPM}))
    state = run(repo, advisories, regenerate=True)
    first, second = items(state)["npm:lodash"], items(state)["npm:minimist"]
    assert (first["status"], second["status"], state["status"]) == (
        "succeeded", "needs_regeneration", "needs_regeneration")
    assert [(b["file"], b["fix"]) for b in second["blockers"]] == [
        ("package-lock.json", "npm install --package-lock-only")]
    assert '+    "minimist": "1.2.6"' in state["patch"] and '+      "version": "4.17.21",' in state["patch"]
    assert '+      "version": "1.2.6",' not in state["patch"]  # only the first item's regeneration


def test_commands_of_other_plan_sources_are_not_run(tmp_path: Path) -> None:
    from subgraphs.vulnerability_remediation.regenerate import regenerate

    action = {"file": "package-lock.json", "cwd": ".", "command": "touch pwned", "why": "w"}
    plan = {"summary": "s", "source": "llm", "data": {"regenerate": [action]}}
    checked = {"item": {"id": "npm:x", "title": "t", "data": {"ecosystem": "npm", "package": "x", "target": "1"}},
               "status": "no_changes", "plan": plan}
    (tmp_path / "package-lock.json").write_text("{}\n")
    out = regenerate({"checked": checked, "repo": str(tmp_path), "options": {"regenerate": True}})
    result = out["checked"]
    assert result["status"] == "needs_regeneration" and not (tmp_path / "pwned").exists()
    assert result["plan"]["data"]["regeneration"][0]["detail"] == (
        "the plan came from llm; only commands written by this tool's recipes are run")


def test_cli_regenerate_flag(home: Path, make_repo: Callable[..., Path], advisories: Path, tmp_path: Path) -> None:
    repo = make_repo({"package.json": PACKAGE_JSON, "package-lock.json": lock()})
    path = tool_dir(tmp_path, {})  # no npm
    result = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(advisories),
                     "--regenerate", "--json", env={"PATH": path})
    assert result.returncode == 7, result.stderr
    [item] = json.loads(result.stdout)["items"]
    assert [(b["kind"], b["message"]) for b in item["blockers"]] == [
        ("regenerate", "npm is not installed (not found on PATH)")]


def test_a_lockfile_linking_out_of_the_repository_is_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from subgraphs.vulnerability_remediation.regenerate import regenerate

    outside = tmp_path / "elsewhere.json"
    outside.write_text(lock())
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text(PACKAGE_JSON)
    (repo / "package-lock.json").symlink_to(outside)
    monkeypatch.setenv("PATH", tool_dir(tmp_path, {"npm": FAKE_NPM}))
    action = {"file": "package-lock.json", "cwd": ".", "command": "npm install --package-lock-only", "why": "w"}
    plan = {"summary": "s", "source": "recipe", "data": {"regenerate": [action], "target": "4.17.21"}}
    checked = {"item": {"id": "npm:lodash", "title": "t",
                        "data": {"ecosystem": "npm", "package": "lodash", "target": "4.17.21"}},
               "status": "no_changes", "plan": plan}
    result = regenerate({"checked": checked, "repo": str(repo), "options": {"regenerate": True}})["checked"]
    assert [b["message"] for b in result["blockers"]] == [
        "package-lock.json leads outside the repository (a symlink?); not run"]
    assert outside.read_text() == lock()
