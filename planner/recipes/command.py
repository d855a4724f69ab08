"""`command:` recipes: a program run in a throwaway copy of the repository; what it changes is the edit.

The copy holds the repository's files (not .git); the user's tree is never touched. The network is cut
with a user+network namespace (`unshare -rn`) unless the policy says `network: true`; where namespaces
are unavailable the recipe is refused rather than run with the network on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from planner.bundle.view import read_repo_file
from planner.recipes.model import Command


class CommandError(RuntimeError):
    """The command could not run (not installed, timed out, no network isolation)."""


@dataclass
class Ran:
    texts: dict[str, str]  # path → new text, for the files in scope that it changed
    exit_code: int
    output: str
    outside: list[str] = field(default_factory=list)  # files it changed outside its `files:` (left out)
    created: list[str] = field(default_factory=list)  # new files (left out: an edit changes existing text)


def _isolated(argv: list[str], network: bool) -> list[str]:
    if network:
        return argv
    unshare = shutil.which("unshare")
    probe = subprocess.run([unshare, "-rn", "true"], capture_output=True, check=False) if unshare else None
    if probe is None or probe.returncode != 0:
        raise CommandError("cannot cut the network for the command (unshare -rn is unavailable here); "
                           "set policy.network: true to run it with the network")
    return [unshare, "-rn", *argv]  # type: ignore[list-item]


def _snapshot(folder: Path) -> dict[str, bytes]:
    found = {}
    for base, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in names:
            full = Path(base, name)
            if full.is_file() and not full.is_symlink():
                found[full.relative_to(folder).as_posix()] = full.read_bytes()
    return found


def run(spec: Command, repo: Path, in_scope: set[str], network: bool) -> Ran:
    argv = _isolated(list(spec.run), network)
    if shutil.which(spec.run[0]) is None and not Path(spec.run[0]).is_absolute():
        raise CommandError(f"{spec.run[0]!r} is not installed (not on PATH)")
    with tempfile.TemporaryDirectory(prefix="planner-command-") as scratch:
        copy = Path(scratch) / "repo"
        shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        before = _snapshot(copy)
        env = {**os.environ, "NO_COLOR": "1", "PIP_NO_INDEX": "1"} if not network else dict(os.environ)
        try:
            done = subprocess.run(argv, cwd=copy, capture_output=True, timeout=spec.timeout, check=False, env=env)
        except subprocess.TimeoutExpired:
            raise CommandError(f"{' '.join(spec.run)} did not finish in {spec.timeout} s") from None
        after = _snapshot(copy)
    changed = sorted(p for p in after if p in before and after[p] != before[p])
    ran = Ran(texts={}, exit_code=done.returncode,
              output=(done.stdout + done.stderr).decode("utf-8", "replace")[-2000:])
    ran.created = sorted(p for p in after if p not in before)
    for path in changed:
        if path not in in_scope:
            ran.outside.append(path)
        elif read_repo_file(repo, path, exact=True).text is not None:  # secrets and binaries stay out
            ran.texts[path] = after[path].decode("utf-8", "surrogateescape")
    return ran
