"""One edit, exact search/replace in a repo file, and the error when it does not apply: below `plan` (which
applies edits) and `unredact` (which maps an edit made on redacted text back to the real one)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Edit(BaseModel):
    """Replace `old` by `new` in `file`. `old` must occur exactly once (or at `line` when given)."""

    model_config = ConfigDict(extra="forbid")

    file: str = Field(description="repo-relative path of the file to change")
    old: str = Field(description="exact text to replace; must occur in the file")
    new: str = Field(description="replacement text")
    line: int | None = Field(default=None, description="1-based line where `old` starts, when known")
    reason: str = Field(default="", description="why this edit")



class EditError(ValueError):
    """An edit that does not apply cleanly to the current file."""
