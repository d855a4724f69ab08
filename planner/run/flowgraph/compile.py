"""A flow compiled into a LangGraph subgraph: one node per state, routed by the record's `next`.

    START → <start> ─(next)→ … ─(end, max_steps, refusal, needs an LLM)→ finish → END

Each node runs its state (states.py / effects.py), counts the step, stops the flow at `max_steps`,
records a stage (`flow:<state>`) for provenance and the live view, and returns the whole flow record.
The graph is compiled without a checkpointer: it runs inside the work graph's `execute` node and
inherits the run's checkpointer there, so a killed run resumes at the state it was in.
"""

from __future__ import annotations

from collections.abc import Hashable
from functools import lru_cache
from typing import Any

from langgraph.graph import END as GRAPH_END
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime

from planner.flow.model import END, Flow, FlowState
from planner.run.context import RunContext
from planner.run.flowgraph.effects import side_effect
from planner.run.flowgraph.facts import FlowGraphState, record_of
from planner.run.flowgraph.finish import finish
from planner.run.flowgraph.states import RUNNERS, Step, Visit
from planner.run.state import WorkOutput

FINISH = "finish"


def node_name(state: str) -> str:
    return f"flow.{state}"  # state names may equal graph-state keys (plan, item…): nodes get a prefix


def _runner(name: str, spec: FlowState, flow: Flow) -> Any:
    run = side_effect if spec.type == "side-effect" else RUNNERS[spec.type]

    def node(state: FlowGraphState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        record = record_of(state)
        record["steps"] += 1
        record["visits"][name] = record["visits"].get(name, 0) + 1
        record["trace"].append(name)
        step: Step = run(Visit(name, spec, state, record, runtime))
        target = step.target
        if target != END and flow.max_steps is not None and record["steps"] >= flow.max_steps:
            record["limit"] = f"the flow reached max_steps ({flow.max_steps}) in state {name!r}, bound for {target!r}"
            target = END
        record["next"] = target
        item = (state.get("item") or {}).get("id")
        runtime.context.on_event("stage", {"item": item, "stage": f"flow:{name}", "outcome": step.outcome})
        stage = {"item": item, "stage": f"flow:{name}", "outcome": step.outcome, "reason": step.reason,
                 "type": spec.type, "next": target}
        return {**step.update, "flow": record, "stages": [stage]}

    return node


def _route(state: FlowGraphState) -> str:
    return (state.get("flow") or {}).get("next") or END


def build(flow: Flow) -> Any:
    graph = StateGraph(FlowGraphState, context_schema=RunContext, output_schema=WorkOutput)
    for name, spec in flow.states.items():
        graph.add_node(node_name(name), _runner(name, spec, flow))
    graph.add_node(FINISH, finish)
    graph.add_edge(START, node_name(flow.start))
    for name, spec in flow.states.items():
        path_map: dict[Hashable, str] = {t: node_name(t) for t in spec.targets() if t != END}
        path_map[END] = FINISH
        graph.add_conditional_edges(node_name(name), _route, path_map)
    graph.add_edge(FINISH, GRAPH_END)
    return graph.compile()


@lru_cache(maxsize=32)
def _compiled(key: str, flow_json: str) -> Any:
    return build(Flow.model_validate_json(flow_json))


def graph_for(tccm: dict[str, Any]) -> Any:
    """The compiled flow of a resolved TCCM (as held in graph state), built once per TCCM version."""
    flow = Flow.model_validate(tccm["flow"])
    return _compiled(f"{tccm['task_class']}:{tccm['sha256']}", flow.model_dump_json())


def recursion_limit(tccm: dict[str, Any]) -> int:
    flow = tccm["flow"]
    return int(flow.get("max_steps") or len(flow["states"])) + 10
