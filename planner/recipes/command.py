"""`command:` recipes: a program run in a throwaway copy of the repository; what it changes is the edit.

The copy holds the repository's files (not .git) with the earlier recipes' edits written in, so recipes
chain; the user's tree is never touched. The program runs in the sandbox (planner/sandbox.py): the copy is
the only path it can write, it sees no home, keys or sockets, and it has no network unless the policy says
`network: true`. Where the sandbox cannot run, the recipe is refused rather than run in the open.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from planner import sandbox
from planner.bundle.view import read_repo_file
from planner.patch.diff import to_bytes
from planner.tccm.recipes import Command

QUIET = {"NO_COLOR": "1", "PIP_NO_INDEX": "1", "PIP_NO_INPUT": "1"}


class CommandError(RuntimeError):
    """The command could not run (not installed, timed out, no sandbox)."""


@dataclass
class Ran:
    texts: dict[str, str]  # path → new text, for the files in scope that it changed
    exit_code: int
    output: str
    outside: list[str] = field(default_factory=list)  # files it changed outside its `files:` (left out)
    created: list[str] = field(default_factory=list)  # new files (left out: an edit changes existing text)
    isolation: str = "bwrap"


def _snapshot(folder: Path) -> dict[str, bytes]:
    found = {}
    for base, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in names:
            full = Path(base, name)
            if full.is_file() and not full.is_symlink():
                found[full.relative_to(folder).as_posix()] = full.read_bytes()
    return found


def _copy(repo: Path, copy: Path, edited: Mapping[str, str]) -> None:
    sandbox.copy_tree(repo, copy, shutil.ignore_patterns(".git"))
    for path, text in edited.items():
        target = copy / path
        if target.is_file() and not target.is_symlink():  # never write through a link the repository holds
            target.write_bytes(to_bytes(text))


def run(spec: Command, repo: Path, in_scope: set[str], network: bool,
        edited: Mapping[str, str] | None = None) -> Ran:
    """Run the command on a copy of `repo` holding `edited` (the earlier recipes' texts)."""
    try:
        sandbox.check_available()
    except sandbox.SandboxUnavailable as exc:
        raise CommandError(str(exc)) from None
    if shutil.which(spec.run[0]) is None and not Path(spec.run[0]).is_absolute():
        hint = {"ruff": "pip install ruff", "ast-grep": "pip install ast-grep-cli"}.get(spec.run[0])
        raise CommandError(f"{spec.run[0]!r} is not installed (not on PATH)" + (f"; {hint}" if hint else ""))
    with sandbox.workspace("command") as scratch:
        copy = scratch / "repo"
        _copy(repo, copy, edited or {})
        before = _snapshot(copy)
        done = sandbox.run(sandbox.Step(spec.run, copy, timeout=spec.timeout, network=network, env=QUIET))
        if done.timed_out:
            raise CommandError(f"{' '.join(spec.run)} did not finish in {spec.timeout} s (every process it "
                               "started was stopped)")
        after = _snapshot(copy)
    changed = sorted(p for p in after if p in before and after[p] != before[p])
    ran = Ran(texts={}, exit_code=done.exit_code or 0, output=done.output[-2000:], isolation=done.isolation)
    ran.created = sorted(p for p in after if p not in before)
    for path in changed:
        if path not in in_scope:
            ran.outside.append(path)
        elif read_repo_file(repo, path, exact=True).text is not None:  # secrets and binaries stay out
            ran.texts[path] = after[path].decode("utf-8", "surrogateescape")
    return ran
