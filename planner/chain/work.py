"""Work items (what a dispatch fans out over) and their results."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ItemStatus = Literal["succeeded", "no_changes", "needs_llm", "failed"]


class WorkItem(BaseModel):
    """One unit of work, e.g. one vulnerable package; the generic default is the whole task."""

    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    data: dict[str, Any] = Field(default_factory=dict)
    inputs: dict[str, str] = Field(default_factory=dict)  # run inputs narrowed for this item (its own bundle)


class ItemResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    item: WorkItem
    status: ItemStatus
    source: str | None = None  # recipe | solved_example | llm
    plan: dict[str, Any] | None = None
    edits: list[dict[str, Any]] = Field(default_factory=list)
    report: str = ""  # markdown section for this item
    notes: list[str] = Field(default_factory=list)
    error: str | None = None
    covering_tests: list[str] = Field(default_factory=list)
    prompt: str | None = None  # needs_llm: the exact prompt the LLM stage would have sent
