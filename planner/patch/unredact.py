"""Edits written against redacted text, applied to the real file.

Everything the planner stores or shows (bundles, prompts, RepoContext, checkpoints) holds secret values as
`REDACTED-<rule>` markers, so a plan's `old`/`new` text may hold markers too. The patch must still change
the user's file exactly: `restore` finds the marked `old` in the real text (each marker standing for one
run of non-space characters, the shape every redacted value has) and puts the values it covered back into
`new`. Nothing here stores the values: they only pass from the file into the in-memory edit.
"""

from __future__ import annotations

import re

from planner.patch.edit import Edit, EditError
from repocontext.secrets import markers


def marked(edit: Edit) -> bool:
    return markers().search(edit.old) is not None or markers().search(edit.new) is not None


def _finder(old: str) -> tuple[re.Pattern[str], list[str]]:
    """A pattern matching the real text `old` was redacted from, and the rule of each of its groups."""
    parts: list[str] = []
    rules: list[str] = []
    at = 0
    for marker in markers().finditer(old):
        parts.append(re.escape(old[at:marker.start()]))
        last = marker.end() == len(old)
        parts.append(r"(\S+)" if last else r"(\S+?)")
        rules.append(marker.group(1))
        at = marker.end()
    parts.append(re.escape(old[at:]))
    return re.compile("".join(parts)), rules


def _line_span(text: str, line: int) -> tuple[int, int]:
    lines = text.splitlines(keepends=True)
    start = sum(len(x) for x in lines[: max(line - 1, 0)])
    return start, start + (len(lines[line - 1]) if 0 < line <= len(lines) else 1)


def _found(text: str, edit: Edit, finder: re.Pattern[str]) -> re.Match[str]:
    if edit.line is not None:
        start, end = _line_span(text, edit.line)
        match = finder.search(text, start)
        if match is None or match.start() >= end:
            raise EditError(f"{edit.file}:{edit.line}: expected {edit.old!r} on that line")
        return match
    matches = list(finder.finditer(text))
    if len(matches) != 1:
        raise EditError(f"{edit.file}: {edit.old!r} occurs {len(matches)} times; an edit needs exactly one")
    return matches[0]


def _by_line(old: str, found: list[str]) -> dict[str, tuple[str, ...]]:
    """Each marked line of `old` (as shown, markers in it) → the values its markers covered, in order; a
    line shown twice with different values is left out (it says nothing certain)."""
    lines: dict[str, tuple[str, ...]] = {}
    clashes: set[str] = set()
    at = 0
    for line in old.splitlines():
        count = len(markers().findall(line))
        if not count:
            continue
        values = tuple(found[at:at + count])
        at += count
        if lines.setdefault(line, values) != values:
            clashes.add(line)
    return {line: values for line, values in lines.items() if line not in clashes}


def _refill(line: str, values: tuple[str, ...]) -> str:
    """`line` with its markers replaced by `values`, in order."""
    parts = markers().split(line)[::2]  # split keeps each marker's rule group: every second part is one
    return "".join(part + (values[i] if i < len(values) else "") for i, part in enumerate(parts))


def _fill(old: str, new: str, rules: list[str], found: list[str], file: str) -> str:
    """`new` with each marker replaced by the value it stands for: that of the same marked line in `old`
    (a line kept or copied, e.g. an ENV repeated in a new stage), else the value the same rule's marker
    covered in `old`, by order (or the one value, when every such marker covered the same)."""
    lines = _by_line(old, found)
    values: dict[str, list[str]] = {}
    for rule, value in zip(rules, found, strict=True):
        values.setdefault(rule, []).append(value)
    used: dict[str, int] = {}

    def by_rule(marker: re.Match[str]) -> str:
        rule = marker.group(1)
        seen = values.get(rule, [])
        index = used.get(rule, 0)
        used[rule] = index + 1
        if index < len(seen):
            return seen[index]
        if seen and len(set(seen)) == 1:
            return seen[0]
        raise EditError(f"{file}: the edit writes a redacted value ({marker.group(0)}) it did not replace; "
                        "a secret cannot be written from its marker")

    out: list[str] = []
    for line in new.splitlines(keepends=True):
        known = lines.get(line.rstrip("\r\n"))
        if known is not None:
            out.append(_refill(line, known))
        else:
            out.append(markers().sub(by_rule, line))
    return "".join(out)


def restore(text: str, edit: Edit) -> Edit:
    """`edit` with the markers in its `old` and `new` replaced by the real values of `text` (the file's
    current content): the exact edit to apply. Raises EditError when the marked text is not found once."""
    finder, rules = _finder(edit.old)
    match = _found(text, edit, finder)
    new = _fill(edit.old, edit.new, rules, list(match.groups()), edit.file)
    return edit.model_copy(update={"old": match.group(0), "new": new})
