"""The shipped YAML-only class `base-image-bump` runs its flow on the bundled example: a plan the
policy refuses goes back to the action state, naming the rule; the next one is kept."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fake_llm import FakePlanner, plan_message
from langchain_core.messages import AIMessage

from planner.config import Settings
from planner.run.dispatch import dispatch

EXAMPLE = Path(__file__).parents[1] / "examples" / "images"
BUMP = {"summary": "python 3.11.4 → 3.11.9", "used_entries": ["must_read:0:Dockerfile"], "edits": [
    {"file": "Dockerfile", "old": "FROM python:3.11.4-slim AS build", "new": "FROM python:3.11.9-slim AS build"},
    {"file": "Dockerfile", "old": "FROM python:3.11.4-slim\nCOPY", "new": "FROM python:3.11.9-slim\nCOPY"}]}
OUTSIDE = {"summary": "also touch the app", "edits": [
    {"file": "app.py", "old": "hello", "new": "hi"}, *BUMP["edits"]]}

# what the flow side effects under test need: each runs only when its flag is given
SIDE_EFFECTS = {"verify": True, "regenerate": True}


def test_base_image_bump_flow_on_the_example(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({p.name: p.read_text() for p in EXAMPLE.iterdir() if p.is_file()})
    model = FakePlanner(messages=iter([AIMessage(content="Both stages use python:3.11.4-slim; move both to 3.11.9."),
                                       plan_message(**OUTSIDE), plan_message(**BUMP)]), prompts=[])
    state = dispatch(Settings.from_env(), "base-image-bump", repo, {}, SIDE_EFFECTS, model, "fake:planner")
    assert state["status"] == "succeeded", state.get("outcomes")
    assert state["patch"].count("+FROM python:3.11.9-slim") == 2 and "b/app.py" not in state["patch"]
    flow = [(s["stage"], s["outcome"]) for s in state["stages"] if s["stage"].startswith("flow:")]
    assert flow == [("flow:triage", "routed"), ("flow:recall", "recalled"), ("flow:think", "noted"),
                    ("flow:propose", "planned"), ("flow:check", "failed"), ("flow:judge", "routed"),
                    ("flow:propose", "planned"), ("flow:check", "ok"), ("flow:judge", "routed"),
                    ("flow:test", "not run"), ("flow:verdict", "routed"), ("flow:done", "marked")]
    refused = next(s for s in state["stages"] if s["stage"] == "flow:check")
    assert "policy.file_kinds (from base-image-bump): app.py is a source file" in refused["reason"]
    assert "policy.file_kinds" in model.prompts[2]  # the refusal is shown to the model's next try
    assert "Your note from think: Both stages" in model.prompts[1]  # the reflection guides the action
    assert "Both stages" not in state["patch"] and "Both stages" not in state["report"]  # never in the output
