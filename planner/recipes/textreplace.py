"""`replace:` recipes: a regular expression and its replacement, per file."""

from __future__ import annotations

import re

from planner.tccm.recipes import Replace


def run(spec: Replace, texts: dict[str, str]) -> tuple[dict[str, str], dict[str, list[int]]]:
    """(new texts, lines of each replacement per file). A match whose replacement equals it is not counted:
    a pattern that already holds the target version is no change."""
    compiled = re.compile(spec.pattern, spec.re_flags)
    out, where = dict(texts), {}
    for path, text in texts.items():
        lines: list[int] = []
        budget = spec.count or None

        def one(match: re.Match[str], text: str = text, lines: list[int] = lines) -> str:
            nonlocal budget
            new = match.expand(spec.with_)
            if new == match.group(0) or budget == 0:
                return match.group(0)
            if budget is not None:
                budget -= 1
            lines.append(text.count("\n", 0, match.start()) + 1)
            return new

        out[path] = compiled.sub(one, text)
        if lines:
            where[path] = lines
    return out, where
