"""The supervisor graph.

    load_tccm → ensure_repocontext → list_work → build_bundle → split ─Send per item─▶ work → join → verify → finalize

`list_work` lists the items from the RepoContext when the task class can (then the run-level bundle leaves
what each item needs to the item's own bundle); otherwise `split` makes them from the run-level bundle.

`work` is itself a graph, one branch per work item (fanned out with Send):

    scope_bundle ─(over budget)──────────────────────▶ execute
        └▶ recipe_match ─(plan)──────────────────────▶ execute
        └─(none)▶ solved_example_rag ─(plan)─────────▶ execute
                      └─(none)▶ llm_fallback ────────▶ execute

`execute` is the task class's own subgraph (subgraphs/<task_class>.py, the
module the TCCM names, or subgraphs/generic.py) — or, for a TCCM with a `flow:`,
that flow compiled into a subgraph (planner/flow/), which then owns the LLM
calls: solved_example_rag goes straight to it.
"""

from __future__ import annotations

import warnings
from typing import Any

from langgraph.graph import END, START, StateGraph

from planner.run import finalize, shortcut, stages, supervisor
from planner.run.context import RunContext
from planner.run.flowgraph import compile as flows
from planner.run.state import RunState, TaskState, WorkOutput, WorkState
from planner.run.taskmodule import for_tccm


def _has_plan(next_stage: str) -> Any:
    """A plan, or a settled outcome (not applicable; a recipe that could not run), goes to execute."""
    return lambda state: "execute" if state.get("plan") or state.get("pending") else next_stage


def _after_examples(state: WorkState) -> str:
    """A class with a flow asks the LLM in its own action states, not in llm_fallback."""
    return "execute" if state.get("plan") or (state.get("tccm") or {}).get("flow") else "llm_fallback"


def _over_budget(state: WorkState) -> str:
    return "execute" if state.get("pending") == "over_budget" else "recipe_match"


def execute(state: TaskState, runtime: Any) -> dict[str, Any]:
    """Hand the item to its task class's compiled subgraph."""
    tccm = state["tccm"]
    # Accumulated lists stay out of the input, so the subgraph's output holds only what it adds.
    fresh = {k: v for k, v in state.items() if k not in ("results", "requests", "stages", "llm_calls", "bundles")}
    if tccm.get("flow"):
        output = flows.graph_for(tccm).invoke(fresh, {"recursion_limit": flows.recursion_limit(tccm)},
                                              context=runtime.context)
        return {key: output.get(key, []) for key in ("results", "requests", "stages", "llm_calls")}
    output = for_tccm(tccm).graph().invoke(fresh, context=runtime.context)
    return {"results": output.get("results", []), "requests": output.get("requests", [])}


def build_work_graph(checkpointer: Any = None) -> Any:
    """The item graph; `checkpointer=False`: its steps are never checkpointed (None: the run's checkpointer)."""
    graph = StateGraph(WorkState, context_schema=RunContext, output_schema=WorkOutput)
    graph.add_node("scope_bundle", stages.scope_bundle)
    graph.add_node("recipe_match", stages.recipe_match)
    graph.add_node("solved_example_rag", stages.solved_example_rag)
    graph.add_node("llm_fallback", stages.llm_fallback)
    graph.add_node("execute", execute)
    graph.add_edge(START, "scope_bundle")
    graph.add_conditional_edges("scope_bundle", _over_budget, ["execute", "recipe_match"])
    # a settled outcome (not applicable; over budget: no example or model may see that bundle) goes to execute
    graph.add_conditional_edges("recipe_match", _has_plan("solved_example_rag"), ["execute", "solved_example_rag"])
    graph.add_conditional_edges("solved_example_rag", _after_examples, ["execute", "llm_fallback"])
    graph.add_edge("llm_fallback", "execute")
    graph.add_edge("execute", END)
    return graph.compile(checkpointer=checkpointer)


# "exit" is what keeps the run's "sync" durability from reaching the checkpoint-less item graph (LangGraph
# warns that the setting has no effect there: that is the point).
warnings.filterwarnings("ignore", message="`durability` has no effect when no checkpointer", category=UserWarning)


def _work_node(durable: Any, fast: Any) -> Any:
    """One item's work. Where a model or a flow may act, its steps are checkpointed (a resumed run does not
    call the model again for an item killed half-way); otherwise the item runs whole without checkpoints of
    its own (the supervisor saves its output when it completes, and resume re-does only unfinished items):
    checkpointing each item's four steps was a third of a 52-Dockerfile recipe run."""

    def run_item(state: WorkState, runtime: Any) -> Any:
        context: RunContext = runtime.context
        if context.model is not None or (state.get("tccm") or {}).get("flow"):
            return durable.invoke(state, context=context)
        return fast.invoke(state, context=context, durability="exit")

    return run_item


def build_graph(checkpointer: Any = None) -> Any:
    graph = StateGraph(RunState, context_schema=RunContext)
    # the head: a dispatch runs it before the graph (planner/run/shortcut.py); these answer with what it did
    graph.add_node("load_tccm", shortcut.replayed("load_tccm", supervisor.load_tccm))
    graph.add_node("ensure_repocontext", shortcut.replayed("ensure_repocontext", supervisor.ensure_repocontext))
    graph.add_node("list_work", shortcut.replayed("list_work", supervisor.list_work))
    graph.add_node("build_bundle", supervisor.build_bundle)
    graph.add_node("split", supervisor.split)
    graph.add_node("work", _work_node(build_work_graph(), build_work_graph(checkpointer=False)))
    graph.add_node("join", supervisor.join)
    graph.add_node("verify", finalize.verify)
    graph.add_node("finalize", finalize.finalize)
    graph.add_edge(START, "load_tccm")
    graph.add_edge("load_tccm", "ensure_repocontext")
    graph.add_edge("ensure_repocontext", "list_work")
    graph.add_edge("list_work", "build_bundle")
    graph.add_edge("build_bundle", "split")
    graph.add_conditional_edges("split", supervisor.fan_out, ["work", "join"])
    graph.add_edge("work", "join")
    graph.add_edge("join", "verify")
    graph.add_edge("verify", "finalize")
    graph.add_edge("finalize", END)
    return graph.compile(checkpointer=checkpointer)


def studio_graph() -> Any:
    """For LangGraph Studio / `langgraph dev` (langgraph.json): the server supplies persistence."""
    return build_graph()
