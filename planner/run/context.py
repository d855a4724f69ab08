"""Run-scoped context handed to every node (not checkpointed: rebuilt on resume)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from planner.config import Settings


@dataclass
class RunContext:
    settings: Settings
    model: Any = None  # a LangChain BaseChatModel, or None (the run then stops at needs_llm)
    model_name: str | None = None  # "provider:name", for the ledger
    on_event: Callable[[str, dict[str, Any]], None] = field(default=lambda kind, data: None)
    # `planner runs answer`: plans given by hand, by work item id ("*": any item), in place of the model's
    answers: dict[str, Any] | None = None
    # the updates of the graph's head nodes, already run for this run before the graph (planner/run/shortcut.py):
    # each of those nodes answers with its update once instead of running again
    ahead: dict[str, dict[str, Any]] | None = None


class NodeRuntime(Protocol):
    """What a node reads of LangGraph's `Runtime`: the run's context. The graph passes its Runtime; a run with
    no work item, finished without the graph (planner/run/shortcut.py), passes its own. Nodes are annotated
    with this, not with langgraph's class, so importing them imports no LangGraph."""

    @property
    def context(self) -> RunContext: ...
