"""What a Context Bundle is made of: entries with their fate, totals, the rendered text."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Status = Literal["included", "excerpt", "truncated", "deferred", "listed", "missing", "denied", "duplicate", "skipped",
                 "requested", "per_item"]
Source = Literal["repocontext", "filesystem", "hot_view", "none"]
Mode = Literal["repocontext", "bootstrap"]
BandName = Literal["must_read", "bootstrap", "should_read", "may_read"]

LOADED: frozenset[str] = frozenset({"included", "excerpt", "truncated"})


class BundleEntry(BaseModel):
    """One item's fate. Also the provenance record for it."""

    model_config = ConfigDict(extra="forbid")

    id: str  # stable citation id: "<band>:<entry index>:<path or key>"
    band: BandName
    entry: int  # index of the TCCM entry within its band
    selector: str  # "key:..." or "glob:..." as written in the TCCM
    kind: Literal["key", "file", "selector"]  # "selector" when nothing concrete was found
    target: str  # the path or the resolved key
    status: Status
    tokens: int = 0  # tokens this item takes in the bundle (0 unless loaded)
    tokens_needed: int | None = None  # full size (truncated, deferred) or estimate (listed)
    source: Source = "none"
    reason: str | None = None
    detail: str | None = None  # why missing/denied/skipped/duplicate, notes on widening
    rule: str | None = None  # the secret rule that denied it


class Totals(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tokens: int
    max_tokens: int
    files: int
    max_files: int
    per_file_max_tokens: int
    header_tokens: int
    by_status: dict[str, int] = Field(default_factory=dict)


class Bundle(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_class: str
    tccm_version: str
    mode: Mode
    inputs: dict[str, str]
    entries: list[BundleEntry]
    totals: Totals
    text: str  # the rendered bundle, exactly what a worker or LLM sees
    sha256: str  # of `text`
    slices: dict[str, Any] = Field(default_factory=dict)  # entry id → loaded RepoContext value (key entries)
    files: dict[str, str] = Field(default_factory=dict)  # path → text as loaded (possibly truncated)

    def loaded(self) -> list[BundleEntry]:
        return [e for e in self.entries if e.status in LOADED]

    def entry(self, entry_id: str) -> BundleEntry | None:
        return next((e for e in self.entries if e.id == entry_id), None)

    def slice(self, section: str) -> list[tuple[str, Any]]:
        """(entry id, value) of every loaded key entry whose key starts with `section`."""
        return [(entry_id, value) for entry_id, value in self.slices.items()
                if entry_id.split(":", 2)[2].startswith(section)]
