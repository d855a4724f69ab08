"""Structural checks of a flow, each tied to a place in the file (the registry adds file:line).

Unknown state types and side-effects are refused by the model; here: fields that do not apply to a
state's type, missing or unknown targets, decisions without a default, bad conditions, states no
path from `start` reaches, states from which `end` cannot be reached (a cycle with no exit), a
cycle without `max_steps`, and side-effects the task class's policy does not allow (nor the network
for one that needs it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from planner.flow.conditions import ConditionError, parse
from planner.flow.model import COMMON, END, LINEAR, TYPE_FIELDS, Flow, FlowState
from planner.policy.enforce import could_run
from planner.policy.model import Policy

Where = tuple[str | int, ...]
Problem = tuple[Where, str]


def _state_fields(name: str, state: FlowState) -> Iterator[Problem]:
    at: Where = ("flow", "states", name)
    allowed = TYPE_FIELDS[state.type] | COMMON
    for field in sorted(state.model_fields_set - allowed):
        article = "an" if state.type[0] in "aeiou" else "a"
        yield (*at, field), f"does not apply to {article} {state.type} state (it takes: {', '.join(sorted(allowed))})"
    if state.type in LINEAR and not state.next:
        yield at, f"a {state.type} state needs `next` (one exit)"
    if state.type == "decision":
        if not state.transitions:
            yield at, "a decision needs `transitions`"
        if not state.default:
            yield at, "a decision needs a `default` (taken when no transition holds)"
    if state.type == "action" and bool(state.next) == bool(state.transitions):
        yield at, "an action needs either `next` or `transitions` with a `default`"
    if state.type == "action" and state.transitions and not state.default:
        yield at, "an action with `transitions` needs a `default`"
    if state.type == "side-effect" and not state.effect:
        yield at, "a side-effect state needs `effect` (apply, verify, regenerate or regather)"
    if state.type == "recall" and not (state.may_read or state.examples):
        yield at, "a recall state needs `may_read` entries or `examples`"
    yield from _transitions(at, state)


def _transitions(at: Where, state: FlowState) -> Iterator[Problem]:
    llm = state.choose == "llm"
    for index, transition in enumerate(state.transitions or ()):
        where = (*at, "transitions", index)
        if llm and not transition.description:
            yield where, "an LLM choice needs a `description` of when to take this exit"
        if not llm and not transition.when:
            yield where, "needs `when` (a condition), or the decision `choose: llm` with descriptions"
        if transition.when:
            try:
                parse(transition.when)
            except ConditionError as exc:
                yield (*where, "when"), str(exc)


def _targets(flow: Flow) -> Iterator[Problem]:
    if flow.start not in flow.states:
        yield ("flow", "start"), f"unknown state {flow.start!r} (states: {', '.join(flow.states)})"
    for name, state in flow.states.items():
        fields: list[tuple[Where, str]] = [(("transitions", i, "next"), t.next)
                                              for i, t in enumerate(state.transitions or ())]
        fields += [((key,), getattr(state, key)) for key in ("default", "next") if getattr(state, key)]
        for path, target in fields:
            if target != END and target not in flow.states:
                yield ("flow", "states", name, *path), f"unknown target state {target!r} (or `end`)"


def _reach(edges: dict[str, list[str]], *starts: str) -> set[str]:
    seen: set[str] = set()
    todo = list(starts)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += edges.get(name, [])
    return seen


def _graph(flow: Flow) -> Iterator[Problem]:
    edges = {n: [t for t in s.targets() if t == END or t in flow.states] for n, s in flow.states.items()}
    reached = _reach(edges, flow.start)
    for name in flow.states:
        if name not in reached:
            yield ("flow", "states", name), f"unreachable: no path from start {flow.start!r} leads here"
    reverse: dict[str, list[str]] = {}
    for name, targets in edges.items():
        for target in targets:
            reverse.setdefault(target, []).append(name)
    exits = _reach(reverse, END)
    for name in sorted(reached - exits - {END}):
        yield ("flow", "states", name), "a cycle with no exit: no path from here reaches `end`"
    looping = any(name in _reach(edges, *edges[name]) for name in reached if name != END)
    if looping and flow.max_steps is None:
        yield ("flow",), "the flow has a cycle: set `max_steps` so a run cannot loop forever"


def state_problems(states: Mapping[str, FlowState]) -> list[Problem]:
    """The checks of each state on its own (a child's states, before they are merged over its parent's)."""
    return [problem for name, state in states.items() for problem in _state_fields(name, state)]


def problems(flow: Flow) -> list[Problem]:
    """Every structural problem, in file order of the states (the graph checks once the rest is sound)."""
    found = list(_targets(flow))
    for name, state in flow.states.items():
        found += list(_state_fields(name, state))
    return found or list(_graph(flow))


def refused_effects(flow: Flow, policy: Policy | None) -> list[Problem]:
    """Side-effect states no run of the class can take: the resolved policy does not allow them (or,
    for regenerate, the network), and no `relax` input would. One a relax input allows validates; a
    run without that input is refused at the state, naming the rule."""
    found: list[Problem] = []
    for name, state in flow.states.items():
        refused = could_run(policy, state.effect) if state.effect else None
        if refused:
            found.append((("flow", "states", name, "effect"), f"{refused.rule}: {refused.message}"))
    return found
