"""Finding a task class's subgraph module: named in the TCCM, named after the class, or generic.

A subgraph module may define:
- RECIPES: list of Recipe instances for the recipe_match stage;
- list_work(context, inputs) -> list[WorkItem]: the work items, listed from the
  RepoContext before any bundle is built (so no budget cut can hide one), with
  ITEM_INPUTS naming the inputs that scope each item's own bundle, and
  optionally nothing_listed(context, inputs) -> str saying why a run has none,
  and overview(context) -> list[str]: one line per candidate item, for a
  run-level view whose per-item entries do not fit the budget;
- split_work(bundle, inputs) -> list[WorkItem]: what a dispatch fans out over
  when there is no RepoContext to list from (default: one item for the whole task);
- build_graph() -> a compiled LangGraph graph over TaskState that executes a
  plan and writes `results` (default: the generic subgraph's).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any

from planner.bundle.model import Bundle
from planner.chain.recipes import Recipe
from planner.chain.work import WorkItem
from planner.errors import PlannerError

GENERIC = "subgraphs.generic"


@dataclass(frozen=True)
class TaskModule:
    name: str
    module: ModuleType
    generic: ModuleType

    @property
    def recipes(self) -> list[Recipe]:
        return list(getattr(self.module, "RECIPES", []))

    @property
    def item_inputs(self) -> tuple[str, ...]:
        return tuple(getattr(self.module, "ITEM_INPUTS", ()))

    @property
    def has_lister(self) -> bool:
        return getattr(self.module, "list_work", None) is not None

    def list_work(self, context: Mapping[str, Any], inputs: dict[str, str]) -> list[WorkItem] | None:
        """Items listed from the RepoContext, or None when this task class does not list its work."""
        lister = getattr(self.module, "list_work", None)
        return None if lister is None else list(lister(context, inputs))

    def nothing_listed(self, context: Mapping[str, Any], inputs: dict[str, str]) -> str:
        why = getattr(self.module, "nothing_listed", None)
        return why(context, inputs) if why else "the RepoContext lists no work item for these inputs"

    def overview(self, context: Mapping[str, Any]) -> list[str] | None:
        summary = getattr(self.module, "overview", None)
        return None if summary is None else list(summary(context))

    def split(self, bundle: Bundle, inputs: dict[str, str]) -> list[WorkItem]:
        splitter = getattr(self.module, "split_work", None) or self.generic.split_work
        return list(splitter(bundle, inputs))

    def graph(self) -> Any:
        return _compiled(self.name)


def module_name(task_class: str, subgraph: str | None) -> str:
    name = subgraph or task_class.replace("-", "_")
    return name if name.startswith("subgraphs.") else f"subgraphs.{name}"


@lru_cache(maxsize=32)
def _import(name: str, required: bool) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name and not name.startswith(f"{exc.name}."):
            raise  # the module exists but one of its own imports is missing: a real error
        if required:
            raise PlannerError(f"subgraph module {name!r} named in the TCCM does not exist") from None
        return None


@lru_cache(maxsize=32)
def _compiled(name: str) -> Any:
    module = _import(name, True)
    builder = getattr(module, "build_graph", None) or _import(GENERIC, True).build_graph  # type: ignore[union-attr]
    return builder()


def resolve(task_class: str, subgraph: str | None, lineage: Sequence[str] = ()) -> TaskModule:
    """The subgraph module for a task class: the TCCM's explicit `subgraph`, else the module named after
    the class or, for a class that extends another, after the nearest ancestor that has one; else generic."""
    generic = _import(GENERIC, True)
    assert generic is not None
    if subgraph is not None:
        name = module_name(task_class, subgraph)
        return TaskModule(name, _import(name, True), generic)  # type: ignore[arg-type]
    for candidate in dict.fromkeys((task_class, *lineage)):
        name = module_name(candidate, None)
        module = _import(name, False)
        if module is not None:
            return TaskModule(name, module, generic)
    return TaskModule(GENERIC, generic, generic)


def for_tccm(tccm: Mapping[str, Any]) -> TaskModule:
    """The subgraph module of a resolved TCCM (as held in graph state)."""
    return resolve(tccm["task_class"], tccm.get("subgraph"), tuple(tccm.get("lineage") or ()))
