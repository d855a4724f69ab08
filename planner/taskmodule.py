"""Finding a task class's subgraph module: named in the TCCM, named after the class, or generic.

A subgraph module may define:
- RECIPES: list of Recipe instances for the recipe_match stage;
- split_work(bundle, inputs) -> list[WorkItem]: what a dispatch fans out over
  (default: one item for the whole task);
- build_graph() -> a compiled LangGraph graph over TaskState that executes a
  plan and writes `results` (default: the generic subgraph's).
"""

from __future__ import annotations

import importlib
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


def resolve(task_class: str, subgraph: str | None) -> TaskModule:
    """The subgraph module for a task class (explicit TCCM `subgraph`, else by name, else generic)."""
    generic = _import(GENERIC, True)
    assert generic is not None
    name = module_name(task_class, subgraph)
    module = _import(name, subgraph is not None)
    if module is None:
        return TaskModule(GENERIC, generic, generic)
    return TaskModule(name, module, generic)
