"""Dispatching and resuming runs of the supervisor graph (durable, resumable)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from planner import sandbox, service
from planner.config import Settings
from planner.errors import ExitCode, PlannerError
from planner.inputs import check_inputs, check_sources
from planner.run import shortcut
from planner.run.context import RunContext
from planner.store.provenance import new_id
from planner.store.runs import RunStore

EXIT = {"succeeded": ExitCode.OK, "no_changes": ExitCode.OK, "not_applicable": ExitCode.OK,
        "needs_llm": ExitCode.NEEDS_LLM,
        "failed": ExitCode.FAILED, "over_budget": ExitCode.BUDGET, "blocked": ExitCode.BLOCKED,
        "needs_regeneration": ExitCode.NEEDS_REGENERATION,
        # found nothing without reading everything (no advisory source, a lockfile no probe reads): not green
        "not_evaluated": ExitCode.BAD_INPUT}
Events = Callable[[str, dict[str, Any]], None]


@lru_cache(maxsize=1)
def _compiled() -> Any:
    from planner.run.graph import build_graph  # LangGraph: ~1 s of imports, which a run with no work never pays

    return build_graph()


def graph_for(runs: RunStore) -> Any:
    """The supervisor graph with this store's checkpointer. Compiling it costs ~30 ms; a portfolio worker runs
    hundreds of repositories in one process, so it is compiled once and each run gets a copy (~2 ms)."""
    return _compiled().copy(update={"checkpointer": runs.checkpointer()})


def _config(run_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": run_id}, "recursion_limit": 100}


def _stream(app: Any, payload: Any, run_id: str, context: RunContext, runs: RunStore) -> dict[str, Any]:
    runs.set_status(run_id, "running")
    announced = set(context.ahead or ())  # the head's nodes were shown as they ran, before the graph
    with shortcut.node_errors(run_id, runs):
        for namespace, update in app.stream(payload, _config(run_id), context=context, stream_mode="updates",
                                            subgraphs=True, durability="sync"):
            for node in update or {}:
                if not namespace and node in announced:
                    announced.discard(node)
                    continue
                context.on_event("node", {"namespace": list(namespace), "node": node})
    snapshot = app.get_state(_config(run_id))
    _record_end(runs, run_id, snapshot)
    return dict(snapshot.values)


def _record_end(runs: RunStore, run_id: str, snapshot: Any) -> None:
    """The run's final status in the run store. finalize records it too, but a resume that only applies the
    saved writes of a finalize killed before its checkpoint does not run finalize again."""
    if not snapshot.next and not snapshot.tasks:
        runs.set_status(run_id, snapshot.values.get("status") or "failed")


def run_options(settings: Settings, advisories: list[str] | None = None, no_gather: bool = False,
                verify: bool = False, regenerate: bool = False, no_sandbox: bool = False) -> dict[str, Any]:
    """A run's options as `planner dispatch` and the MCP dispatch tool give them: advisory sources given,
    else PLANNER_ADVISORIES."""
    sources = advisories or [str(p) for p in settings.advisories]
    options = {"no_gather": no_gather, "verify": verify, "regenerate": regenerate,
               "advisories": os.pathsep.join(sources) or None}
    return {**options, "no_sandbox": True} if no_sandbox else options  # absent unless asked: same bytes as before


def dispatch(settings: Settings, task_class: str, repo: Path, inputs: Mapping[str, str], options: dict[str, Any],
             model: Any = None, model_name: str | None = None, on_event: Events | None = None,
             answers: dict[str, Any] | None = None) -> dict[str, Any]:
    # bad input fails here, before a run exists: an unknown class or input, a missing repository or source
    check_inputs(service.task_class(settings, task_class), inputs)
    root = service.repo_root(repo)
    sandbox.allow_unsandboxed(bool(options.get("no_sandbox")))  # the run's options record it
    check_sources(options.get("advisories"))
    run_id = new_id()
    runs = RunStore(settings.home)
    runs.create(run_id, task_class, str(root), dict(inputs), {**options, "model": model_name})
    context = RunContext(settings=settings, model=model, model_name=model_name,
                         on_event=on_event or (lambda kind, data: None), answers=answers)
    context.on_event("run", {"run_id": run_id})
    return _start(_initial(run_id, task_class, str(root), inputs, options), context, runs)


def _start(start: dict[str, Any], context: RunContext, runs: RunStore) -> dict[str, Any]:
    """A new run: its head without the graph (planner/run/shortcut.py); a run with no work item is finished
    there too, one with work is run by the graph, whose head nodes answer with what the head did."""
    if not shortcut.ENABLED:
        return _stream(graph_for(runs), start, start["run_id"], context, runs)
    head = shortcut.head(start, context, runs)
    if not shortcut.needs_graph(head.state):
        return shortcut.finish(head.state, context, runs)
    context.ahead = head.updates  # the graph's head nodes answer with these: nothing is done twice
    return _stream(graph_for(runs), start, start["run_id"], context, runs)


def _initial(run_id: str, task_class: str, repo: str, inputs: Mapping[str, str],
             options: Mapping[str, Any]) -> dict[str, Any]:
    """A run's first state: what the graph starts from (on dispatch, and on a resume with no checkpoint)."""
    return {"run_id": run_id, "task_class": task_class, "repo": repo, "inputs": dict(inputs),
            "options": {k: v for k, v in options.items() if k != "model"}, "results": [], "stages": [],
            "requests": [], "llm_calls": [], "bundles": []}


def resume(settings: Settings, run_id: str, model: Any = None, model_name: str | None = None,
           on_event: Events | None = None) -> dict[str, Any]:
    runs = RunStore(settings.home)
    row = runs.get(run_id)
    if row["status"] == "superseded":
        raise PlannerError(f"run {row['id']} was superseded by its portfolio's rerun; nothing to resume")
    final = runs.final(row["id"])
    if final is not None:  # finished without the graph: nothing to do
        runs.set_status(row["id"], final.get("status") or "failed")
        return final
    sandbox.allow_unsandboxed(bool(row["options"].get("no_sandbox")))  # as the run was dispatched
    app = graph_for(runs)
    snapshot = app.get_state(_config(row["id"]))
    context = RunContext(settings=settings, model=model, model_name=model_name or row["options"].get("model"),
                         on_event=on_event or (lambda kind, data: None))
    if not snapshot.values:  # stopped before its first checkpoint: nothing was done, so it starts over
        context.on_event("resume", {"run_id": row["id"], "next": ["start (no checkpoint: starting over)"]})
        return _start(_initial(row["id"], row["task_class"], row["repo"], row["inputs"], row["options"]), context, runs)
    if not snapshot.next and not snapshot.tasks:
        _record_end(runs, row["id"], snapshot)
        return dict(snapshot.values)  # already finished: nothing to do
    # A process killed after a node's writes were saved but before the next checkpoint leaves `next` empty
    # and the node's task holding its result: streaming applies those writes and goes on from there.
    waiting = list(snapshot.next) or [t.name for t in snapshot.tasks]
    context.on_event("resume", {"run_id": row["id"], "next": waiting})
    return _stream(app, None, row["id"], context, runs)


def final_state(settings: Settings, run_id: str) -> dict[str, Any]:
    runs = RunStore(settings.home)
    row = runs.get(run_id)
    values = runs.final(row["id"]) or dict(graph_for(runs).get_state(_config(row["id"])).values)
    if not values:  # a run made by a portfolio worker elsewhere: its artifacts came back, its checkpoints did not
        values = _from_artifacts(runs, row)
    return {**values, "run": row}


def _from_artifacts(runs: RunStore, row: dict[str, Any]) -> dict[str, Any]:
    folder = runs.artifacts(row["id"])
    files = {"report": "report.md", "patch": "patch.diff"}
    found = {key: folder / name for key, name in files.items() if (folder / name).is_file()}
    if not found:
        return {}
    return {"status": row["status"], "artifacts": {k: str(p) for k, p in found.items()},
            **{k: p.read_text(encoding="utf-8") for k, p in found.items()}}
