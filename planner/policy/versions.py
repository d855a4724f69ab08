"""How far a dependency edit moves a version: patch, minor or major.

Versions compare by their numeric components (`2.30.0` → `2.31.0` is minor, `3.2` → `4.1` major);
a component that is not a number ends the comparison. Edits are read token by token: where an
edit's old and new text hold the same number of versions, each pair that differs is a bump.
"""

from __future__ import annotations

import re

_VERSION = re.compile(r"(?<![\w.-])v?(\d+(?:\.\d+)+)(?![\w.])")


def _numbers(version: str) -> list[int]:
    out: list[int] = []
    for part in re.split(r"[.+-]", version.lstrip("vV")):
        if not part.isdigit():
            break
        out.append(int(part))
    return out


def bump(old: str, new: str) -> str | None:
    """patch | minor | major for a version change (either direction), None when the numbers agree."""
    a, b = _numbers(old), _numbers(new)
    for index in range(max(len(a), len(b))):
        if (a[index] if index < len(a) else 0) != (b[index] if index < len(b) else 0):
            return ("major", "minor")[index] if index < 2 else "patch"
    return None


def edit_bumps(old: str, new: str) -> list[tuple[str, str, str]]:
    """(old version, new version, bump) for each version an edit changes."""
    before, after = _VERSION.findall(old), _VERSION.findall(new)
    if len(before) != len(after):
        return []  # not a like-for-like rewrite: nothing to pair safely
    return [(a, b, kind) for a, b in zip(before, after, strict=True) if (kind := bump(a, b))]
