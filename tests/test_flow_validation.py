"""Flow validation: every problem one line at file:line, before any run."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from planner.flow.conditions import ConditionError, evaluate, parse
from planner.flow.mermaid import render
from planner.tccm.registry import Registry

HEAD = """\
task_class: flowy
version: 1
description: a flow under test
budget: {max_files: 5, max_tokens: 4000, per_file_max_tokens: 1000}
flow:
"""


def _errors(tmp_path: Path, flow: str) -> list[str]:
    (tmp_path / "flowy.yaml").write_text(HEAD + textwrap.indent(textwrap.dedent(flow).strip() + "\n", "  "))
    return [str(e).split("/")[-1] for e in Registry([tmp_path]).validate()]


CASES = {
    "unknown type": ("""
        start: a
        states:
          a: {type: thinking, next: end}
        """, ["flowy.yaml:8: flow.states.a.type: unknown state type 'thinking' (known: action, decision, recall, "
              "reflection, annotation, side-effect)"]),
    "missing target and start": ("""
        start: nowhere
        states:
          a: {type: annotation, note: hi, next: b}
        """, ["flowy.yaml:6: flow.start: unknown state 'nowhere' (states: a)",
              "flowy.yaml:8: flow.states.a.next: unknown target state 'b' (or `end`)"]),
    "decision without default": ("""
        start: a
        states:
          a:
            type: decision
            transitions:
              - {when: plan.exists, next: end}
        """, ["flowy.yaml:8: flow.states.a: a decision needs a `default` (taken when no transition holds)"]),
    "unreachable": ("""
        start: a
        states:
          a: {type: annotation, note: hi, next: end}
          b: {type: annotation, note: lost, next: end}
        """, ["flowy.yaml:9: flow.states.b: unreachable: no path from start 'a' leads here"]),
    "cycle with no exit": ("""
        start: a
        max_steps: 5
        states:
          a: {type: annotation, note: hi, next: b}
          b: {type: annotation, note: ho, next: a}
        """, ["flowy.yaml:9: flow.states.a: a cycle with no exit: no path from here reaches `end`",
              "flowy.yaml:10: flow.states.b: a cycle with no exit: no path from here reaches `end`"]),
    "cycle without a step limit": ("""
        start: a
        states:
          a: {type: annotation, note: hi, next: b}
          b:
            type: decision
            transitions: [{when: visits.a < 3, next: a}]
            default: end
        """, ["flowy.yaml:5: flow: the flow has a cycle: set `max_steps` so a run cannot loop forever"]),
    "fields of another type and a bad condition": ("""
        start: a
        states:
          a: {type: annotation, note: hi, effect: verify, next: b}
          b:
            type: decision
            transitions: [{when: "budget > 3", next: end}]
            default: end
        """, ["flowy.yaml:8: flow.states.a.effect: does not apply to an annotation state (it takes: description, "
              "next, note, type)",
              "flowy.yaml:11: flow.states.b.transitions[0].when: unknown name 'budget' (known: item, inputs, plan, "
              "apply, verify, regenerate, regather, steps, visits, notes, recalled, action)"]),
    "unknown field": ("""
        start: a
        states:
          a: {type: annotation, note: hi, next: end, colour: red}
        """, ["flowy.yaml:8: flow.states.a.colour: unknown field"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_flow_problems_are_named_at_file_line(tmp_path: Path, case: str) -> None:
    flow, expected = CASES[case]
    assert _errors(tmp_path, flow) == expected


def test_a_sound_flow_validates_and_renders(tmp_path: Path) -> None:
    assert _errors(tmp_path, """
        start: a
        max_steps: 6
        states:
          a: {type: action, instructions: plan it, next: b}
          b: {type: side-effect, effect: apply, next: c}
          c:
            type: decision
            transitions: [{when: apply.failed and visits.a < 3, next: a}]
            default: end
        """) == []
    flow = Registry([tmp_path]).get("flowy").flow
    assert flow is not None
    diagram = render(flow)
    assert diagram.startswith("flowchart TD\n") and "c -->|apply.failed and visits.a #lt; 3| a" in diagram
    assert 'b{{"b<br/><i>side-effect: apply</i>"}}' in diagram and "c -->|default| end_" in diagram


def test_conditions() -> None:
    facts = {"plan": {"exists": True, "edits": [1, 2]}, "verify": {"failed": False}, "inputs": {"mode": "strict"},
             "visits": {"a": 2}}
    assert evaluate("plan.edits.count > 1 and not verify.failed", facts)
    assert evaluate("verify.failed or inputs.mode == strict", facts)
    assert not evaluate("visits.a >= 3 or visits.b > 0", facts)
    assert evaluate('inputs.mode != "loose"', facts)
    for bad in ("", "plan.exists and", "plan.exists ~ 3", "nope.x"):
        with pytest.raises(ConditionError):
            parse(bad)
