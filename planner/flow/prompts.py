"""Prompts for a flow's LLM states: the chain's prompt (bundle, inputs, item) plus where the flow
stands — the state's objective and instructions, the current plan, the last apply and test run,
notes from reflections and recalled examples. Never the full RepoContext."""

from __future__ import annotations

import json
from typing import Any

from planner.bundle.model import Bundle
from planner.chain import llm
from planner.chain.work import WorkItem
from planner.flow.facts import FlowGraphState
from planner.flow.model import FlowState


def _progress(state: FlowGraphState, record: dict[str, Any]) -> list[str]:
    parts = []
    plan = state.get("plan")
    if plan:
        edits = "\n".join(f"- {e['file']}: {e['old']!r} → {e['new']!r}" for e in plan.get("edits") or [])
        parts.append(f"Current plan ({plan.get('source')}): {plan.get('summary')}\n{edits}")
    applied = record.get("apply") or {}
    if applied.get("failed"):
        parts.append(f"Applying the current plan failed: {applied.get('error')}")
    tested = record.get("verify") or {}
    if tested.get("failed"):
        parts.append(f"The tests failed on the current plan (`{tested.get('command')}`, exit "
                     f"{tested.get('exit_code')}):\n{tested.get('output', '')[-2000:]}")
    if (record.get("action") or {}).get("failed"):
        parts.append(f"The previous plan was rejected: {record['action'].get('error')}")
    for note in record.get("notes") or []:
        parts.append(f"Your note from {note['state']}: {note['text']}")
    for example in record.get("recalled") or []:
        parts.append(f"A solved example (run {example['run_id']}, similarity {example['score']}): "
                     f"{example['summary']}\n{example['patch']}")
    if record.get("trace"):
        parts.append("States so far: " + " → ".join(record["trace"]))
    return parts


def _header(name: str, spec: FlowState) -> str:
    lines = [f"You are in the flow state '{name}' ({spec.type})."]
    if spec.description:
        lines.append(f"Objective: {spec.description}")
    if spec.instructions:
        lines.append(f"Instructions for this state: {spec.instructions}")
    return "\n".join(lines)


def _base(state: FlowGraphState, bundle: Bundle) -> str:
    tccm = state["tccm"]
    return llm.build_prompt(state["task_class"], tccm["description"], tccm.get("worker"), state["inputs"],
                            WorkItem.model_validate(state["item"]), bundle)


def action_prompt(name: str, spec: FlowState, state: FlowGraphState, record: dict[str, Any], bundle: Bundle) -> str:
    return "\n\n".join([_header(name, spec), *_progress(state, record), _base(state, bundle)])


def choice_prompt(name: str, spec: FlowState, state: FlowGraphState, record: dict[str, Any]) -> str:
    exits = "\n".join(f"- {t.next}: {t.description}" for t in spec.transitions or ())
    item = WorkItem.model_validate(state["item"])
    return "\n\n".join([
        _header(name, spec), *_progress(state, record),
        f"Work item: {item.title}\n{json.dumps(item.data, sort_keys=True)}",
        f"Choose exactly one exit by its name:\n{exits}\nIf none fits, choose {spec.default}.",
    ])


def reflection_prompt(name: str, spec: FlowState, state: FlowGraphState, record: dict[str, Any], limit: int) -> str:
    bundle = Bundle.model_validate(state["bundle"])
    ask = (f"Think about: {spec.problem or spec.description or 'what the next state must get right'}\n"
           f"Answer with a final deduction of at most {limit} words: no reasoning trace, no edits.")
    return "\n\n".join([_header(name, spec), *_progress(state, record), ask, _base(state, bundle)])
