"""`extends` for flows: a child changes its parent's flow state by state instead of rewriting it.

    extends: base-image-bump
    flow:
      max_steps: 20                       # scalars the child sets replace the parent's
      remove: [think]                     # parent states to drop
      states:
        recall: {type: recall, examples: 3, next: propose}   # same name: replaces the parent's state
        lint:   {type: side-effect, effect: verify, next: done}   # new name: added

A state is replaced whole (its type decides which fields it takes, so fields are not mixed across
two definitions). `replace: true` drops the parent's flow and takes the child's as written. The
merged flow is validated like any other (validate.py), each problem at the line of the file that
defined the state it concerns; `origin` says which task class each state came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from planner.flow.model import Flow, FlowDocument, FlowState
from planner.flow.validate import Problem


@dataclass
class Merged:
    flow: Flow | None = None
    origin: dict[str, str] = field(default_factory=dict)  # state → the task class whose file defines it
    problems: list[Problem] = field(default_factory=list)


def _removed(parent: Flow, doc: FlowDocument) -> tuple[set[str], list[Problem]]:
    names: set[str] = set()
    problems: list[Problem] = []
    for index, name in enumerate(doc.remove or ()):
        if name not in parent.states:
            problems.append((("flow", "remove", index), f"the parent's flow has no state {name!r} "
                                                        f"(its states: {', '.join(parent.states)})"))
        elif name in doc.states:
            problems.append((("flow", "remove", index), f"{name!r} is also defined under flow.states: "
                                                        "drop one (a state of the same name already replaces it)"))
        names.add(name)
    return names, problems


def merge(parent: Flow | None, parent_origin: Mapping[str, str], doc: FlowDocument, task_class: str) -> Merged:
    """The flow a class runs: `doc` alone, or merged over the parent's state by state."""
    base = None if doc.replace else parent
    if base is None and doc.remove:
        return Merged(problems=[(("flow", "remove"), "there is no parent flow to remove states from")])
    states: dict[str, FlowState] = {}
    origin: dict[str, str] = {}
    problems: list[Problem] = []
    if base is not None:
        removed, problems = _removed(base, doc)
        states = {n: s for n, s in base.states.items() if n not in removed}
        origin = {n: parent_origin.get(n, "the parent") for n in states}
    for name, state in doc.states.items():
        states[name], origin[name] = state, task_class
    start = doc.start or (base.start if base else None)
    if start is None:
        problems.append((("flow", "start"), "required field is missing"))
    if not states:
        problems.append((("flow", "states"), "a flow needs at least one state"))
    if problems or start is None:  # no start is one of the problems
        return Merged(origin=origin, problems=problems)
    flow = Flow(description=doc.description or (base.description if base else None), start=start,
                max_steps=doc.max_steps if doc.max_steps is not None else (base.max_steps if base else None),
                states=states)
    return Merged(flow=flow, origin=origin)
