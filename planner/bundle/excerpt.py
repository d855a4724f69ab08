"""An excerpt of a file for a `files_of` entry with `lines: N`: each named line with N lines either side.

A lockfile or a pip-compile output with hashes can run to 15k tokens while the package's pin is a few
lines of it; the recipe reads the whole file from the repository anyway (and never edits a hashed one),
so what a reader of the bundle needs is the pin in its place. Each kept run of lines is headed by
`@@ lines A-B of TOTAL @@` so a reader can cite and locate it; lines between runs are not shown, and the
heading says so by its numbers.
"""

from __future__ import annotations


def spans(named: list[int], total: int, context: int) -> list[tuple[int, int]]:
    """1-based inclusive (first, last) runs around each named line, merged where they touch."""
    merged: list[tuple[int, int]] = []
    for line in sorted({n for n in named if 1 <= n <= total}):
        first, last = max(1, line - context), min(total, line + context)
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def excerpt(text: str, named: list[int], context: int) -> tuple[str, str] | None:
    """(body, detail) of the excerpt, or None when it would not be shorter than the file (or names no line)."""
    lines = text.splitlines()
    runs = spans(named, len(lines), context)
    if not runs or sum(last - first + 1 for first, last in runs) >= len(lines):
        return None
    parts: list[str] = []
    for first, last in runs:
        parts.append(f"@@ lines {first}-{last} of {len(lines)} @@")
        parts.extend(lines[first - 1:last])
    shown = ", ".join(f"{a}-{b}" for a, b in runs)
    return "\n".join(parts) + "\n", f"excerpt: lines {shown} of {len(lines)} ({context} around each named line)"
