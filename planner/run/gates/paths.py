"""Where the planner may write: a path inside the repository that is not a symbolic link and lies under none.

A committed link (`lib/evil.py -> /tmp/x/outside.py`, or `lib -> /etc`) would carry an edit, a patched copy
or `--apply`'s commit out of the repository (or retarget the link itself); so would `..` or an absolute path.
Every item's edits are checked here before they are merged into the patch (planner/run/supervisor.py), a
plan is checked before it is accepted (planner/run/stages.py, planner/run/taskbase.py), and `--apply`
checks the patch's files against the work tree and HEAD (planner/run/apply.py).
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from planner.chain.work import ItemResult

NEVER = "the planner never writes through a link or outside the repository"
FIX = "edit the file the link points to in its own repository, or commit a regular file in its place"


def refusal(repo: str | Path, rel: str) -> str | None:
    """Why the planner will not write `rel` in the work tree of `repo` (one line naming it), or None."""
    parts = rel.split("/")
    if not rel or "\0" in rel or rel.startswith("/") or ".." in parts or (len(rel) > 1 and rel[1] == ":"):
        return f"{rel!r} leaves the repository; {NEVER}"
    root = Path(repo)
    current = root
    for index, part in enumerate(parts):
        if part in ("", "."):
            continue
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            break  # nothing there to follow
        except OSError as exc:
            return f"{rel} cannot be checked ({exc.strerror}); {NEVER}"
        if stat.S_ISLNK(info.st_mode):
            return _link(rel, "/".join(parts[: index + 1]), os.readlink(current))
    real, top = os.path.realpath(root / rel), os.path.realpath(root)
    if os.path.commonpath([real, top]) != top:
        return f"{rel} resolves outside the repository (to {real}); {NEVER}"
    return None


def _link(rel: str, link: str, target: str) -> str:
    if link == rel:
        return f"{rel} is a symbolic link (to {target}); {NEVER}"
    return f"{rel} lies under the symbolic link {link} (to {target}); {NEVER}"


def committed_links(repo: Path, rels: Sequence[str]) -> dict[str, str]:
    """Each of `rels` that HEAD records as a symbolic link, or under one → why it is refused. The work tree
    may hold a regular file where the commit has a link: `--apply` commits onto HEAD, so HEAD decides too."""
    prefixes = {"/".join(rel.split("/")[: i + 1]): rel for rel in rels for i in range(rel.count("/") + 1)}
    if not prefixes:
        return {}
    env = {**os.environ, "GIT_LITERAL_PATHSPECS": "1", "LC_ALL": "C"}
    proc = subprocess.run(["git", "-C", str(repo), "ls-tree", "-z", "--full-name", "HEAD", "--", *prefixes],
                          capture_output=True, env=env, check=False, timeout=120)
    if proc.returncode != 0:
        return {}  # no HEAD (an empty repository): nothing is committed, the work tree check stands alone
    top = _show_prefix(repo)
    found: dict[str, str] = {}
    for record in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, name = record.partition("\t")
        local = name.removeprefix(top)
        if meta.startswith("120000 ") and name.startswith(top) and local in prefixes:
            rel = prefixes[local]
            found.setdefault(rel, _link(rel, local, _blob(repo, meta.split()[2])))
    return found


def _show_prefix(repo: Path) -> str:
    proc = subprocess.run(["git", "-C", str(repo), "rev-parse", "--show-prefix"], capture_output=True, text=True,
                          check=False, timeout=60)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _blob(repo: Path, oid: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), "cat-file", "blob", oid], capture_output=True, check=False,
                          timeout=60)
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else "?"


def refusals(repo: str | Path, files: Iterable[str]) -> dict[str, str]:
    """file → why it is refused, for each of `files` the planner will not write (work tree check)."""
    return {f: why for f in sorted(set(files)) if (why := refusal(repo, f)) is not None}


def edit_files(edits: Iterable[Mapping[str, Any] | Any]) -> list[str]:
    """The files a list of edits (dicts or Edit models) writes."""
    return sorted({e["file"] if isinstance(e, Mapping) else e.file for e in edits})


def block(result: ItemResult, refused: Mapping[str, str]) -> None:
    """Block an item whose edits would write through a link or outside the repository: none of its edits
    enter the patch, and each file is a `path` blocker naming it."""
    from planner.chain.work import Blocker  # here: `--apply`'s check needs none of the models

    result.status = "blocked"
    result.error = "refused: " + "; ".join(refused.values())
    result.blockers = [*result.blockers, *(Blocker(kind="path", file=f, message=why, fix=FIX)
                                           for f, why in refused.items())]
    shown = "".join(f"- `{f}`: {why}\n" for f, why in refused.items())
    result.report += f"\n**Refused** (nothing of this item is in the patch):\n\n{shown}"
