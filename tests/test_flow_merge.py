"""A child's flow changes its parent's state by state through `extends`: override, add, remove, or
replace it whole; the merged flow is validated (file:line) and shows where each state came from."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli
from fake_llm import fake_planner
from test_flow_dispatch import FILES, FIXER, plan

from planner.config import Settings
from planner.errors import ExitCode
from planner.run.dispatch import dispatch
from planner.tccm.registry import Registry

CHILD = """
task_class: quick-fixer
version: 1
extends: readme-fixer
flow:
  max_steps: 12
  remove: [baseline]
  states:
    triage:
      type: decision
      transitions:
        - {when: plan.exists, next: test}
      default: note
    note: {type: annotation, note: retitling the README, next: propose}
"""


@pytest.fixture
def parent(tccm_dir: Callable[..., Path]) -> Callable[..., Path]:
    tccm_dir({"readme-fixer": FIXER.replace("MAX", "10")})
    return tccm_dir


def test_a_child_overrides_adds_and_removes_states(home: Path, parent: Callable[..., Path],
                                                   make_repo: Callable[..., Path]) -> None:
    parent({"quick-fixer": CHILD})
    tccm = Registry(Settings.from_env().task_class_dirs).get("quick-fixer")
    assert tccm.flow is not None and (tccm.flow.start, tccm.flow.max_steps) == ("triage", 12)
    assert tccm.flow_origin == {"triage": "quick-fixer", "propose": "readme-fixer", "test": "readme-fixer",
                                "judge": "readme-fixer", "note": "quick-fixer"}
    assert tccm.flow.states["triage"].default == "note"

    repo = make_repo(FILES)
    state = dispatch(Settings.from_env(), "quick-fixer", repo, {}, {"verify": True}, fake_planner(plan("widget")),
                     "fake:planner")
    assert state["status"] == "succeeded", state.get("error")
    assert [(s["stage"], s["outcome"]) for s in state["stages"] if s["stage"].startswith("flow:")] == [
        ("flow:triage", "routed"), ("flow:note", "marked"), ("flow:propose", "planned"), ("flow:test", "passed"),
        ("flow:judge", "routed")]


def test_show_and_list_say_where_each_state_came_from(home: Path, parent: Callable[..., Path]) -> None:
    parent({"quick-fixer": CHILD})
    shown = run_cli("task-classes", "show", "quick-fixer", env={"COLUMNS": "200"})
    assert shown.returncode == ExitCode.OK, shown.stderr
    rows = [line for line in shown.stdout.splitlines() if line.startswith("│ ")]
    origin = {cells[0]: cells[-1] for cells in ([c.strip() for c in r.strip("│").split("│")] for r in rows)
              if cells[-1] in ("quick-fixer", "readme-fixer")}
    assert origin == {"triage": "quick-fixer", "propose": "readme-fixer", "test": "readme-fixer",
                      "judge": "readme-fixer", "note": "quick-fixer"}
    data = json.loads(run_cli("task-classes", "show", "quick-fixer", "--json").stdout)
    assert data["flow_origin"]["note"] == "quick-fixer" and "baseline" not in data["flow"]["states"]
    listed = {r["task_class"]: r for r in json.loads(run_cli("task-classes", "list", "--json").stdout)}
    assert listed["quick-fixer"]["flow"]["states"] == 5
    assert listed["quick-fixer"]["flow"]["inherited"] == ["judge", "propose", "test"]


def test_replace_drops_the_parents_flow(home: Path, parent: Callable[..., Path]) -> None:
    parent({"quick-fixer": """
        task_class: quick-fixer
        version: 1
        extends: readme-fixer
        flow:
          replace: true
          start: only
          states:
            only: {type: annotation, note: nothing else, next: end}
        """})
    tccm = Registry(Settings.from_env().task_class_dirs).get("quick-fixer")
    assert tccm.flow is not None and list(tccm.flow.states) == ["only"] and tccm.flow.max_steps is None


BROKEN = {
    "removes a state the parent lacks": ("""
        flow:
          remove: [nope]
        """, "quick-fixer.yaml:5: flow.remove[0]: the parent's flow has no state 'nope' (its states: triage, "
             "baseline, propose, test, judge)"),
    "adds a state that goes nowhere": ("""
        flow:
          states:
            judge:
              type: decision
              transitions:
                - {when: verify.failed, next: propose}
              default: wrap-up
        """, "quick-fixer.yaml:10: flow.states.judge.default: unknown target state 'wrap-up' (or `end`)"),
    "strands a state of the parent": ("""
        flow:
          states:
            triage:
              type: decision
              transitions:
                - {when: plan.exists, next: test}
              default: propose
        """, "quick-fixer.yaml:4: flow.states.baseline: unreachable: no path from start 'triage' leads here "
             "(state 'baseline' comes from readme-fixer)"),
    "gives a state a field of another type": ("""
        flow:
          states:
            test: {type: side-effect, effect: verify, note: hi, next: judge}
        """, "quick-fixer.yaml:6: flow.states.test.note: does not apply to a side-effect state (it takes: "
             "description, effect, next, type)"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_the_merged_flow_is_validated_at_file_line(home: Path, parent: Callable[..., Path], case: str) -> None:
    body, expected = BROKEN[case]
    parent({"quick-fixer": "task_class: quick-fixer\nversion: 1\nextends: readme-fixer\n" +
            "\n".join(line[8:] for line in body.strip("\n").splitlines()) + "\n"})
    result = run_cli("task-classes", "validate")
    assert result.returncode == ExitCode.INVALID
    errors = [line.split("/")[-1] for line in result.stderr.splitlines()]
    assert expected in errors, result.stderr
    assert "Traceback" not in result.stderr


def test_a_flow_without_a_parent_flow_needs_its_start(home: Path, tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"base": """
        task_class: base
        version: 1
        description: no flow here
        budget: {max_files: 5, max_tokens: 4000, per_file_max_tokens: 1000}
        """, "child": """
        task_class: child
        version: 1
        extends: base
        flow:
          states:
            only: {type: annotation, note: hi, next: end}
        """})
    result = run_cli("task-classes", "validate")
    assert result.returncode == ExitCode.INVALID
    assert "child.yaml:4: flow.start: required field is missing" in result.stderr


def test_a_class_extending_the_definition_it_shadows_keeps_the_two_apart(home: Path,
                                                                         tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"base-image-bump": """
        task_class: base-image-bump
        version: 2
        extends: base-image-bump
        flow:
          states:
            done: {type: annotation, note: bumped and checked twice, next: end}
        """})
    tccm = Registry(Settings.from_env().task_class_dirs).get("base-image-bump")
    assert tccm.flow_origin["done"] == "base-image-bump"
    assert tccm.flow_origin["triage"].startswith("base-image-bump (") and \
        tccm.flow_origin["triage"].endswith("task-class-contexts/base-image-bump.yaml)")
    listed = {r["task_class"]: r for r in json.loads(run_cli("task-classes", "list", "--json").stdout)}
    assert len(listed["base-image-bump"]["flow"]["inherited"]) == 9
