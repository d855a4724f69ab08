"""Plans and edits: what every chain stage (recipe, solved example, LLM) produces.

A plan is data: the edits it wants (exact search/replace in repo files), the
bundle entries it relied on (cited by id), and notes for the report. Applying
edits happens in memory and yields a unified diff; the user's repo is only
touched by an explicit `--apply`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from planner.patch.diff import unified_diff
from planner.patch.edit import Edit, EditError
from planner.patch.unredact import marked, restore

__all__ = ["Edit", "EditError", "Plan", "apply_edits", "unified_diff"]

PlanSource = Literal["recipe", "solved_example", "llm"]


class Plan(BaseModel):
    """A plan for one work item."""

    model_config = ConfigDict(extra="forbid")

    summary: str = Field(description="one line: what the change does")
    steps: list[str] = Field(default_factory=list, description="the steps, in order, for the report")
    edits: list[Edit] = Field(default_factory=list, description="file edits that implement the plan")
    used_entries: list[str] = Field(default_factory=list, description="bundle entry ids the plan relied on")
    requests: list[str] = Field(default_factory=list,
                                description="may_read entry ids the planner needs loaded before it can finish")
    notes: list[str] = Field(default_factory=list, description="caveats for the report (e.g. regenerate a lockfile)")
    source: PlanSource | None = None
    recipe: str | None = None  # "name@version" when source == "recipe"
    data: dict[str, object] = Field(default_factory=dict, description="structured facts for the report")


def _locate(text: str, edit: Edit) -> int:
    if edit.line is not None:
        lines = text.splitlines(keepends=True)  # numbered as the parsers that give `line` number them
        offset = sum(len(x) for x in lines[: max(edit.line - 1, 0)])
        found = text.find(edit.old, offset)
        line_end = offset + len(lines[edit.line - 1]) if 0 < edit.line <= len(lines) else offset
        if found != -1 and found < max(line_end, offset + 1):
            return found
        raise EditError(f"{edit.file}:{edit.line}: expected {edit.old!r} on that line")
    count = text.count(edit.old)
    if count != 1:
        raise EditError(f"{edit.file}: {edit.old!r} occurs {count} times; an edit needs exactly one")
    return text.index(edit.old)


def apply_edits(read: Callable[[str], str | None], edits: Sequence[Edit]) -> dict[str, tuple[str, str]]:
    """Apply edits in memory: path → (old text, new text). Raises EditError when one does not apply.

    An edit identical to one already applied (file, line, old and new text) is applied once: two items that
    move one shared version (a Maven property, a Gradle catalog entry read by two vulnerable artifacts) to
    the same target make the same edit, which is one change, not a clash."""
    files: dict[str, tuple[str, str]] = {}
    seen: set[tuple[str, int | None, str, str]] = set()
    for edit in edits:
        if (key := (edit.file, edit.line, edit.old, edit.new)) in seen:
            continue
        seen.add(key)
        if edit.file not in files:
            original = read(edit.file)
            if original is None:
                raise EditError(f"{edit.file}: cannot read the file to edit")
            files[edit.file] = (original, original)
        original, current = files[edit.file]
        if not edit.old:
            raise EditError(f"{edit.file}: an edit needs non-empty 'old' text")
        if marked(edit):
            edit = restore(current, edit)  # only for edits made on redacted text
        at = _locate(current, edit)
        files[edit.file] = (original, current[:at] + edit.new + current[at + len(edit.old):])
    return files
