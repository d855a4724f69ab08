"""Text as lines the way git and Docker read it.

Both split on LF only: CR, form feed, U+2028 and the rest stay inside a line (`str.splitlines` would cut
there, so a patch would no longer match its file and a Dockerfile's line numbers would drift).
"""

from __future__ import annotations


def split_lines(text: str) -> list[str]:
    """Lines with their LF; only the last may lack one."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines
