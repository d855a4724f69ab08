"""A run with no work item, finished without LangGraph.

Importing LangGraph and LangChain costs a bare process about a second; a run that has nothing to do (no
vulnerable package, no Dockerfile to migrate, a run stopped before its items) needs none of it. So every
dispatch first runs the supervisor graph's straight-line head itself, with the graph's own node functions:

    load_tccm → ensure_repocontext → list_work

If that leaves no work item to fan out (`supervisor.has_work`), the rest of the graph is straight-line too
(`split` sends nothing to `work`, so `fan_out` goes to `join`), and this module runs it the same way:

    build_bundle → split → join → verify → finalize

State updates are merged as the graph's channels merge them (the `operator.add` fields of RunState add up,
every other field takes the last value), node events go to the run's `on_event` as the graph's stream would
send them, and finalize writes the same report, artifacts, provenance record, telemetry and run status. The
final state, which a graph run leaves in its last checkpoint, is kept in the run store (`RunStore.keep_final`),
redacted as a checkpoint is, for `planner runs show`, `runs resume` and the UI.

A run with items, or whose class lists its items from the bundle (`list_work` leaves them to `split`), is
run by the graph from its start, as any run: the graph's head nodes (`replayed`) answer with the updates the
head made (`RunContext.ahead`) instead of running again, so nothing is done twice, every checkpoint is the
graph's own and the run's values stay in memory exactly as they were made.
"""

from __future__ import annotations

import operator
import os
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, cast, get_type_hints

from planner import tokens
from planner.errors import ExitCode, Interrupted, PlannerError
from planner.run import finalize, supervisor
from planner.run.context import NodeRuntime, RunContext
from planner.run.state import RunState
from planner.store.runs import RunStore

Node = Callable[[Any, Any], dict[str, Any]]


class GraphNode(Protocol):
    """A node as the graph calls it (by keyword: `runtime=`)."""

    def __call__(self, state: RunState, runtime: NodeRuntime) -> dict[str, Any]: ...

ENABLED = True  # tests switch it off to compare a run of the graph with a run finished here


def _split(state: RunState, runtime: Any) -> dict[str, Any]:
    return supervisor.split(state)


# The graph's straight line (planner/run/graph.py; tests/test_dispatch_shortcut.py holds the two together).
HEAD: tuple[tuple[str, Node], ...] = (
    ("load_tccm", supervisor.load_tccm), ("ensure_repocontext", supervisor.ensure_repocontext),
    ("list_work", supervisor.list_work))
TAIL: tuple[tuple[str, Node], ...] = (
    ("build_bundle", supervisor.build_bundle), ("split", _split), ("join", supervisor.join),
    ("verify", finalize.verify), ("finalize", finalize.finalize))


@dataclass(frozen=True)
class _Runtime:
    """What a node reads of LangGraph's Runtime (planner.run.context.NodeRuntime)."""

    context: RunContext


def _added() -> frozenset[str]:
    """RunState's fields whose channel adds updates up (`Annotated[list, operator.add]`)."""
    hints = get_type_hints(RunState, include_extras=True)
    return frozenset(name for name, hint in hints.items() if operator.add in getattr(hint, "__metadata__", ()))


ADDED = _added()


def _merge(state: dict[str, Any], update: dict[str, Any]) -> None:
    for key, value in update.items():
        state[key] = [*state.get(key, []), *value] if key in ADDED else value


@contextmanager
def node_errors(run_id: str, runs: RunStore) -> Iterator[None]:
    """How a run stops when a node raises or the user interrupts it, with or without the graph."""
    try:
        yield
    except KeyboardInterrupt:
        runs.set_status(run_id, "interrupted")
        raise Interrupted(f"interrupted: resume with `planner runs resume {run_id}`", run_id=run_id) from None
    except Exception as exc:
        runs.set_status(run_id, "failed")
        if os.environ.get("PLANNER_DEBUG"):  # the traceback the user asked for, before it becomes one line
            traceback.print_exc()
        raise PlannerError(f"run {run_id} stopped in a node: {exc.__class__.__name__}: {exc}; "
                           f"`planner runs resume {run_id}` retries from the last checkpoint",
                           ExitCode.FAILED, run_id=run_id) from exc


@dataclass
class Head:
    """A run after the graph's head: its state, and each head node's update (for the graph's `replayed` nodes)."""

    state: dict[str, Any]
    updates: dict[str, dict[str, Any]]


def _run(nodes: tuple[tuple[str, Node], ...], state: dict[str, Any],
         context: RunContext) -> list[tuple[str, dict[str, Any]]]:
    runtime, steps = _Runtime(context), []
    for name, node in nodes:
        update = node(state, runtime) or {}
        _merge(state, update)
        steps.append((name, update))
        context.on_event("node", {"namespace": [], "node": name})
    return steps


def head(start: dict[str, Any], context: RunContext, runs: RunStore) -> Head:
    """The run after the graph's head (HEAD), run without the graph."""
    state = dict(start)
    runs.set_status(state["run_id"], "running")
    with node_errors(state["run_id"], runs):
        steps = _run(HEAD, state, context)
    return Head(state, dict(steps))


def replayed(name: str, node: Node) -> GraphNode:
    """The graph's head node `name`: the update it made for this run before the graph (RunContext.ahead), once,
    where there is one; otherwise the node itself (a run started in the graph, a resumed one)."""

    def run(state: RunState, runtime: NodeRuntime) -> dict[str, Any]:
        ahead = runtime.context.ahead
        if ahead is not None and name in ahead:
            return ahead.pop(name)
        return node(state, runtime)

    run.__name__ = run.__qualname__ = getattr(node, "__name__", name)
    return run


def needs_graph(state: dict[str, Any]) -> bool:
    """Whether the run may have work items: listed ones, or a class whose items only `split` knows."""
    run_state = cast(RunState, state)  # the head's state (RunState's keys) in a plain dict: see _merge
    return supervisor.has_work(run_state) or not supervisor.items_known(run_state)


def finish(state: dict[str, Any], context: RunContext, runs: RunStore) -> dict[str, Any]:
    """The rest of a run with no work item (TAIL), without the graph; its final state is kept in the run store."""
    with node_errors(state["run_id"], runs), tokens.few_texts():  # its bundle holds the must-read keys only
        _run(TAIL, state, context)
    return runs.keep_final(state["run_id"], [name for name, _ in (*HEAD, *TAIL)], state)
