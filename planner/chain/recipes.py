"""Deterministic recipes: declarative, versioned, tested; matched over the bundle only.

A recipe declares its task class, a `match` that says why it does not apply
(None when it does) and an `apply` that yields a Plan with edits. Recipes live
beside their task's subgraph (`subgraphs/<module>/recipes.py`, listed in the
module's RECIPES) and are collected from there.
"""

from __future__ import annotations

from typing import ClassVar

from planner.bundle.model import Bundle
from planner.chain.work import WorkItem
from planner.plan import Plan


class Recipe:
    name: ClassVar[str]
    version: ClassVar[str]
    task_class: ClassVar[str]
    description: ClassVar[str] = ""

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"

    def match(self, bundle: Bundle, item: WorkItem) -> str | None:  # pragma: no cover - interface
        """None when the recipe applies; otherwise the reason it does not."""
        raise NotImplementedError

    def apply(self, bundle: Bundle, item: WorkItem) -> Plan:  # pragma: no cover - interface
        raise NotImplementedError
