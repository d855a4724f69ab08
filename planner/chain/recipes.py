"""Deterministic recipes: declarative, versioned, tested.

A recipe declares its task class, a `match` that says why it does not apply
(None when it does) and an `apply` that yields a Plan with edits. Recipes live
beside their task's subgraph (`subgraphs/<module>/recipes.py`, listed in the
module's RECIPES) and are collected from there.

A recipe decides from structured data that is complete: the work item's data
(listed from the RepoContext) and whole files (`RepoFiles`). The bundle may
hold a cut copy of a file; that cut only limits what an LLM is shown, so a
recipe reads the whole file, and every such read is recorded for provenance.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from planner.bundle.model import Bundle
from planner.bundle.view import read_repo_file
from planner.chain.work import WorkItem
from planner.patch.plan import Plan

WHOLE = frozenset({"included", "requested"})


class Decline(BaseModel):
    """Why a recipe does not apply, and where when it can say (the item's blocker points there)."""

    reason: str
    file: str | None = None
    line: int | None = None


class RepoFiles:
    """Whole repository files for a recipe (a `Reader`): the bundle's copy when it holds the whole file,
    else read from the repository the safe way (no secrets, no links, nothing outside it), recorded."""

    def __init__(self, repo: str | Path, bundle: Bundle) -> None:
        self.root, self.bundle = Path(repo), bundle
        self.reads: list[dict[str, Any]] = []
        self._whole = {e.target for e in bundle.entries if e.kind == "file" and e.status in WHOLE}
        self._excerpts = {e.target for e in bundle.entries if e.kind == "file" and e.status == "excerpt"}

    def __call__(self, path: str) -> str | None:
        # Always the exact bytes (surrogate-escaped): the bundle's copy is decoded for display, and an edit
        # made on it would not round-trip a non-UTF-8 byte. Only a read the bundle did not cover is recorded.
        result = read_repo_file(self.root, path, exact=True)
        if not (path in self._whole and path in self.bundle.files):
            cut = "the bundle holds an excerpt" if path in self._excerpts else "the bundle holds a cut copy"
            why = cut if path in self.bundle.files else "not loaded in the bundle"
            record = {"file": path, "why": why, "outcome": "read" if result.text is not None else result.status}
            if record not in self.reads:
                self.reads.append(record)
        return result.text


class Recipe:
    name: ClassVar[str]
    version: ClassVar[str]
    task_class: ClassVar[str]
    description: ClassVar[str] = ""

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"

    def match(self, bundle: Bundle, item: WorkItem, files: RepoFiles) -> str | Decline | None:  # pragma: no cover
        """None when the recipe applies; otherwise the reason it does not (a Decline when it knows where)."""
        raise NotImplementedError

    def apply(self, bundle: Bundle, item: WorkItem, files: RepoFiles) -> Plan:  # pragma: no cover - interface
        raise NotImplementedError
