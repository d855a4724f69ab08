"""A patch never carries a new secret: an item whose edits write a secret-looking value its file did not hold is
blocked, and the value reaches neither patch.diff, patch.exact.diff nor the `--apply` commit. Values a file
already holds still apply exactly (a line kept next to a password)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git, run_cli

from planner.errors import PlannerError
from planner.patch.diff import unified_diff
from planner.run.apply import apply_patch, check_secrets
from planner.run.gates.leaks import introduced

AWS_KEY = "AKIAQWERTYUIOPASDFGH"
GITHUB_TOKEN = "ghp_" + "a1B2" * 9
PASSWORD = "hunter2-Hunter2x"
SETTINGS = 'DEBUG = False\nDEPLOY_KEY = ""\nVERSION = "1"\n'
KEY_CLASS = """
task_class: set-key
version: 1
description: Put the deploy key into the settings.
inputs:
  key: {description: The deploy key., pattern: '[A-Za-z0-9_]+'}
must_read:
  - glob: app/settings.py
budget: {max_files: 5, max_tokens: 4000, per_file_max_tokens: 2000}
recipes:
  - id: set-key@1
    files: ["app/settings.py"]
    replace:
      pattern: '^DEPLOY_KEY = .*$'
      with: 'DEPLOY_KEY = "${inputs.key}"'
"""
TOKEN_CLASS = f"""
task_class: set-token
version: 1
description: Hard-code a token (what no patch may do).
must_read:
  - glob: app/settings.py
budget: {{max_files: 5, max_tokens: 4000, per_file_max_tokens: 2000}}
recipes:
  - id: set-token@1
    files: ["app/settings.py"]
    replace:
      pattern: '^DEPLOY_KEY = .*$'
      with: 'TOKEN = "{GITHUB_TOKEN}"'
"""
BUMP_CLASS = """
task_class: bump-version
version: 1
description: Bump the settings' version.
must_read:
  - glob: app/settings.py
budget: {max_files: 5, max_tokens: 4000, per_file_max_tokens: 2000}
recipes:
  - id: bump@1
    files: ["app/settings.py"]
    replace:
      pattern: '^VERSION = "1"$'
      with: 'VERSION = "2"'
"""


def _run_files(home: Path) -> str:
    """Everything the run wrote as artifacts (report, patch.diff, patch.exact.diff, prompts, ledger)."""
    return "".join(p.read_text(encoding="utf-8", errors="replace") for p in sorted((home / "runs").rglob("*"))
                   if p.is_file())


@pytest.mark.parametrize(("klass", "args", "secret", "rule"), [
    ("set-key", ("--input", f"key={AWS_KEY}"), AWS_KEY, "aws-access-key-id"),  # copied in through an input
    ("set-token", (), GITHUB_TOKEN, "github-token"),  # written by the recipe itself
])
def test_an_edit_introducing_a_secret_is_blocked_and_never_written(
        make_repo: Callable[..., Path], home: Path, tccm_dir: Callable[..., Path], klass: str,
        args: tuple[str, ...], secret: str, rule: str) -> None:
    tccm_dir({"set-key": KEY_CLASS, "set-token": TOKEN_CLASS})
    repo = make_repo({"app/settings.py": SETTINGS})
    head = git(repo, "rev-parse", "HEAD")
    done = run_cli("dispatch", klass, "--repo", str(repo), "--apply", "--json", *args)
    assert done.returncode == 8, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "blocked" and result["patch"] == "" and result["branch"] is None
    blockers = [b for item in result["items"] for b in item["blockers"]]
    assert [(b["kind"], b["file"], b["line"]) for b in blockers] == [("secret", "app/settings.py", 2)]
    assert f"({rule})" in blockers[0]["message"]
    assert secret not in done.stdout and secret not in done.stderr
    run_dir = home / "runs" / result["run_id"]
    assert not (run_dir / "patch.diff").exists() and not (run_dir / "patch.exact.diff").exists()
    assert secret not in _run_files(home)
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "branch", "--format=%(refname:short)").split() == [
        "main"]
    assert (repo / "app" / "settings.py").read_text() == SETTINGS
    assert secret not in git(repo, "log", "--all", "-p")


def test_a_secret_the_file_already_holds_still_applies_exactly(
        make_repo: Callable[..., Path], home: Path, tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"bump-version": BUMP_CLASS})
    settings = f'PASSWORD = "{PASSWORD}"\nVERSION = "1"\n'
    repo = make_repo({"app/settings.py": settings})
    done = run_cli("dispatch", "bump-version", "--repo", str(repo), "--apply", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "succeeded" and result["branch"]
    assert PASSWORD not in result["patch"] and "REDACTED-secret-key-value" in result["patch"]  # shown redacted
    run_dir = home / "runs" / result["run_id"]
    assert PASSWORD in (run_dir / "patch.exact.diff").read_text()  # the exact copy, 0600, for git apply
    committed = git(repo, "show", f"{result['branch']}:app/settings.py")
    assert committed == settings.replace('VERSION = "1"', 'VERSION = "2"')


def test_introduced_counts_only_values_the_file_did_not_hold() -> None:
    before = f'PASSWORD = "{PASSWORD}"\nKEY = ""\n'
    assert introduced(before, before.replace('KEY = ""', 'KEY = "x"')) == []
    assert introduced(before, before + f'COPY = "{PASSWORD}"\n') == []  # a value it holds, repeated
    assert introduced(before, before.replace('KEY = ""', f'KEY = "{AWS_KEY}"')) == [(2, "aws-access-key-id")]


def test_apply_refuses_a_patch_that_adds_a_secret(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"app/settings.py": SETTINGS})
    patch = unified_diff({"app/settings.py": (SETTINGS, SETTINGS.replace('DEPLOY_KEY = ""',
                                                                         f'DEPLOY_KEY = "{AWS_KEY}"'))})
    with pytest.raises(PlannerError, match=r"app/settings\.py: the patch writes a value that looks like a secret "
                                           r"\(aws-access-key-id\)") as caught:
        apply_patch(repo, patch, "planner/x", "message")
    assert AWS_KEY not in str(caught.value)
    assert git(repo, "branch", "--format=%(refname:short)").split() == ["main"]
    check_secrets(repo, unified_diff({"app/settings.py": (SETTINGS, SETTINGS.replace('"1"', '"2"'))}))
