"""A YAML-only task class with its own flow runs per work item on real LangGraph graphs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fake_llm import FakePlanner, fake_planner
from langchain_core.messages import AIMessage

from planner.config import Settings
from planner.run.dispatch import dispatch

FIXER = """
task_class: readme-fixer
version: 1
description: Title the README after the project and keep the tests green.
worker: Replace the first heading of README.md with "# <project name>".
must_read:
  - glob: README.md
    reason: the file to change
  - glob: pyproject.toml
    reason: the project name
budget: {max_files: 5, max_tokens: 4000, per_file_max_tokens: 1000}
policy:
  paths: [README.md, "docs/**"]
  side_effects: [apply, verify]
flow:
  start: triage
  max_steps: MAX
  states:
    triage:
      type: decision
      transitions:
        - {when: plan.exists, next: test}
      default: baseline
    baseline:
      type: side-effect
      effect: verify
      next: propose
    propose:
      type: action
      instructions: Change only the first heading.
      next: test
    test:
      type: side-effect
      effect: verify
      next: judge
    judge:
      type: decision
      transitions:
        - {when: verify.failed, next: propose}
      default: end
"""
FILES = {"README.md": "# old title\n\nSome text.\n", "pyproject.toml": "[project]\nname = 'widget'\n",
         "Makefile": "test:\n\tgrep -q '^# widget$$' README.md\n"}

# what the flow side effects under test need: each runs only when its flag is given
SIDE_EFFECTS = {"verify": True, "regenerate": True}


def plan(title: str, file: str = "README.md", old: str = "# old title") -> dict[str, object]:
    return {"summary": f"Title the README {title}", "steps": ["rename the heading"],
            "edits": [{"file": file, "old": old, "new": f"# {title}"}],
            "used_entries": ["must_read:0:README.md"], "notes": []}


def test_flow_takes_the_expected_path(home: Path, tccm_dir: Callable[..., Path],
                                      make_repo: Callable[..., Path]) -> None:
    tccm_dir({"readme-fixer": FIXER.replace("MAX", "10")})
    repo = make_repo(FILES)
    model = fake_planner(plan("widgit"), plan("widget"))
    state = dispatch(Settings.from_env(), "readme-fixer", repo, {}, SIDE_EFFECTS, model, "fake:planner")
    assert state["status"] == "succeeded", state.get("error")
    assert "-# old title\n+# widget\n" in state["patch"]
    flow = [(s["stage"], s["outcome"]) for s in state["stages"] if s["stage"].startswith("flow:")]
    assert flow == [("flow:triage", "routed"), ("flow:baseline", "failed"), ("flow:propose", "planned"),
                    ("flow:test", "failed"), ("flow:judge", "routed"), ("flow:propose", "planned"),
                    ("flow:test", "passed"), ("flow:judge", "routed")]
    assert "exit" in model.prompts[1] and "widgit" in model.prompts[1]  # the failed run is shown to the model
    assert [c["state"] for c in state["llm_calls"]] == ["propose", "propose"]


DETERMINISTIC = """
task_class: pin-check
version: 1
description: Mark the run, recall the docs, and stop without a model.
must_read:
  - glob: README.md
may_read:
  - glob: "docs/**"
budget: {max_files: 5, max_tokens: 4000, per_file_max_tokens: 1000}
flow:
  start: begin
  states:
    begin: {type: annotation, note: checking the pins, next: docs}
    docs: {type: recall, may_read: ["glob:docs/**"], next: route}
    route:
      type: decision
      transitions:
        - {when: "item.data.inputs.mode == strict", next: test}
      default: done
    test: {type: side-effect, effect: verify, next: done}
    done: {type: annotation, note: nothing to change, next: end}
"""


def test_deterministic_flow_runs_without_a_model(home: Path, tccm_dir: Callable[..., Path],
                                                 make_repo: Callable[..., Path]) -> None:
    tccm_dir({"pin-check": DETERMINISTIC})
    repo = make_repo({**FILES, "docs/guide.md": "# Guide\n", "Makefile": "test:\n\ttrue\n"})
    state = dispatch(Settings.from_env(), "pin-check", repo, {"mode": "strict"}, SIDE_EFFECTS, None, None)
    flow = [(s["stage"], s["outcome"]) for s in state["stages"] if s["stage"].startswith("flow:")]
    assert flow == [("flow:begin", "marked"), ("flow:docs", "recalled"), ("flow:route", "routed"),
                    ("flow:test", "passed"), ("flow:done", "marked")]
    assert [(r["entry"], r["outcome"], r["by"]) for r in state["requests"]] == [
        ("may_read:0:docs/guide.md", "loaded", "flow:docs")]
    assert state["llm_calls"] == [] and state["status"] == "no_changes"
    loose = dispatch(Settings.from_env(), "pin-check", repo, {}, SIDE_EFFECTS, None, None)
    assert [s["stage"] for s in loose["stages"] if s["stage"].startswith("flow:")] == [
        "flow:begin", "flow:docs", "flow:route", "flow:done"]


def test_a_loop_stops_at_max_steps_and_blocks_the_item(home: Path, tccm_dir: Callable[..., Path],
                                                       make_repo: Callable[..., Path]) -> None:
    tccm_dir({"readme-fixer": FIXER.replace("MAX", "6")})
    repo = make_repo(FILES)
    model = fake_planner(plan("widgit"), plan("widgat"), plan("widgot"))
    state = dispatch(Settings.from_env(), "readme-fixer", repo, {}, SIDE_EFFECTS, model, "fake:planner")
    assert state["status"] == "blocked" and not state.get("patch")
    item = state["outcomes"][0]
    assert [b["kind"] for b in item["blockers"]] == ["step-limit"]
    assert "max_steps (6)" in item["blockers"][0]["message"]


def test_an_edit_outside_the_policy_fails_the_item_naming_the_rule(home: Path, tccm_dir: Callable[..., Path],
                                                                     make_repo: Callable[..., Path]) -> None:
    tccm_dir({"readme-fixer": FIXER.replace("MAX", "10")})
    repo = make_repo(FILES)
    wrong = plan("widget")  # passes the tests, but also edits a file the policy does not let it touch
    wrong["edits"] = [*wrong["edits"], {"file": "pyproject.toml", "old": "widget", "new": "widget2"}]
    state = dispatch(Settings.from_env(), "readme-fixer", repo, {}, SIDE_EFFECTS, fake_planner(wrong), "fake:planner")
    assert state["status"] == "blocked" and not state.get("patch")
    item = state["outcomes"][0]
    assert item["blockers"][-1]["kind"] == "policy"
    assert "policy.paths (from readme-fixer)" in item["error"] and "pyproject.toml" in item["error"]
    refused = [s for s in state["stages"] if s["stage"] == "policy"]
    assert refused and refused[0]["outcome"] == "refused"
    assert refused[0]["rules"] == ["policy.paths (from readme-fixer)"]


CHOOSER = """
task_class: chooser
version: 1
description: Let the model pick a path.
must_read:
  - glob: README.md
budget: {max_files: 5, max_tokens: 4000, per_file_max_tokens: 1000}
flow:
  start: pick
  states:
    pick:
      type: decision
      choose: llm
      transitions:
        - {description: the README needs a new title, next: retitle}
        - {description: the README is fine, next: fine}
      default: fine
    retitle: {type: annotation, note: retitling, next: end}
    fine: {type: annotation, note: nothing to do, next: end}
"""


def test_an_llm_decision_picks_a_named_transition(home: Path, tccm_dir: Callable[..., Path],
                                                  make_repo: Callable[..., Path]) -> None:
    tccm_dir({"chooser": CHOOSER})
    repo = make_repo(FILES)
    answer = AIMessage(content="", tool_calls=[{"name": "Choice", "args": {"next": "retitle", "why": "old title"},
                                                "id": "c1"}])
    model = FakePlanner(messages=iter([answer]), prompts=[])
    state = dispatch(Settings.from_env(), "chooser", repo, {}, SIDE_EFFECTS, model, "fake:planner")
    flow = [(s["stage"], s["outcome"], s["reason"]) for s in state["stages"] if s["stage"].startswith("flow:")]
    assert flow[0] == ("flow:pick", "chosen", "old title") and flow[1][0] == "flow:retitle"
    assert "- retitle: the README needs a new title" in model.prompts[0]
    assert state["llm_calls"][0]["state"] == "pick"
    without = dispatch(Settings.from_env(), "chooser", repo, {}, SIDE_EFFECTS, None, None)  # no model: the default
    assert [s["stage"] for s in without["stages"] if s["stage"].startswith("flow:")] == ["flow:pick", "flow:fine"]
