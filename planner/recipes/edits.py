"""Turning a recipe's new file texts into the plan's search/replace edits, one per changed block of lines.

Per block, not per file, so the report and the policy see each change where it is; every edit carries the
line it starts on (counted in the text as the edits before it left it), so the same old text elsewhere in the
file is never taken for it.
"""

from __future__ import annotations

import difflib

from planner.patch.plan import Edit
from repocontext.lines import split_lines


def file_edits(path: str, before: str, after: str, reason: str, shifted: bool = True) -> list[Edit]:
    """The edits, applied in order (`shifted`: lines counted after the edits before; else in `before`)."""
    old_lines, new_lines = split_lines(before), split_lines(after)
    edits: list[Edit] = []
    shift = 0  # lines added minus lines removed by the edits so far
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i1 == i2:  # a pure insertion: anchor it on the line before (or after, at the top of the file)
            if i1 > 0:
                i1, j1 = i1 - 1, j1 - 1
            else:
                i2, j2 = i2 + 1, j2 + 1
        old, new = "".join(old_lines[i1:i2]), "".join(new_lines[j1:j2])
        edits.append(Edit(file=path, old=old, new=new, line=i1 + 1 + shift, reason=reason))
        shift += ((j2 - j1) - (i2 - i1)) if shifted else 0
    return edits
