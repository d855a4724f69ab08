"""A unified diff (git diff, diff -u) read back into search/replace edits, one per hunk.

Each hunk's context and removed lines are the text to find, its context and added lines the text to put
there, at the hunk's starting line; so a patch becomes a plan that the usual checks apply to.
"""

from __future__ import annotations

import re

from planner.patch.plan import Edit

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(ValueError):
    """Text that is not a patch this reader understands (binary, a new or deleted file, a rename)."""


def _path(line: str) -> str:
    name = line[4:].split("\t")[0].strip()
    return name[2:] if name[:2] in ("a/", "b/") else name


def edits_from_patch(text: str) -> list[Edit]:
    edits: list[Edit] = []
    path: str | None = None
    old: list[str] = []
    new: list[str] = []
    start, last = 0, " "
    shift = 0  # lines the earlier hunks of the same file added or removed: edits apply one after another

    def flush() -> None:
        nonlocal old, new, shift
        if path is not None and (old or new):
            if not "".join(old):
                raise PatchError(f"{path}: a hunk with no context or removed line (a new file?) is not supported")
            edits.append(Edit(file=path, old="".join(old), new="".join(new), line=start + shift,
                              reason="hand-made patch"))
            shift += len(new) - len(old)
        old, new = [], []

    for line in text.splitlines(keepends=True):
        if line.startswith("--- "):
            flush()
            path, shift = None, 0
            if _path(line) == "/dev/null":
                raise PatchError("new files are not supported (an edit changes existing text)")
        elif line.startswith("+++ "):
            path = _path(line)
            if path == "/dev/null":
                raise PatchError("deleted files are not supported")
        elif line.startswith("@@"):
            flush()
            found = _HUNK.match(line)
            if found is None or path is None:
                raise PatchError(f"bad hunk header {line.strip()!r}")
            start = int(found.group(1))
        elif line.startswith("GIT binary patch"):
            raise PatchError("binary patches are not supported")
        elif path is not None and line[:1] in (" ", "-", "+"):
            last = line[0]
            if last in (" ", "-"):
                old.append(line[1:])
            if last in (" ", "+"):
                new.append(line[1:])
        elif line.startswith("\\") and path is not None:  # "\ No newline at end of file": for the line before
            for side, kinds in ((old, " -"), (new, " +")):
                if side and last in kinds:
                    side[-1] = side[-1].removesuffix("\n")
    flush()
    if not edits:
        raise PatchError("no hunks found")
    return edits
