"""A task class that exists only as YAML runs end to end through the LLM path; RAG then reuses it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fake_llm import fake_planner

from planner.config import Settings
from planner.run.dispatch import dispatch
from planner.store.provenance import ProvenanceStore

README_TITLE = """
task_class: readme-title
version: 1
description: Give the README a title that names the project.
worker: Replace the first heading of README.md with "# <project name>".
must_read:
  - glob: README.md
    reason: the file to change
  - glob: pyproject.toml
    reason: the project name
may_read:
  - glob: "docs/**"
budget: {max_files: 5, max_tokens: 4000, per_file_max_tokens: 1000}
"""

FILES = {"README.md": "# old title\n\nSome text.\n", "pyproject.toml": "[project]\nname = 'widget'\n",
         "docs/guide.md": "# Guide\n", ".env": "API_TOKEN=do-not-leak\n"}
PLAN = {"summary": "Title the README after the project", "steps": ["rename the heading"],
        "edits": [{"file": "README.md", "old": "# old title", "new": "# widget"}],
        "used_entries": ["must_read:0:README.md", "must_read:1:pyproject.toml"], "notes": []}


def test_yaml_only_task_class_via_llm_then_rag(home: Path, tccm_dir: Callable[..., Path],
                                               make_repo: Callable[..., Path]) -> None:
    tccm_dir({"readme-title": README_TITLE})
    repo = make_repo(FILES)
    settings = Settings.from_env()
    model = fake_planner(PLAN)
    state = dispatch(settings, "readme-title", repo, {}, {}, model, "fake:planner")
    assert state["status"] == "succeeded", state.get("error")
    assert "-# old title\n+# widget\n" in state["patch"]
    assert (repo / "README.md").read_text() == FILES["README.md"]  # the repo itself is untouched
    stages = [(s["stage"], s["outcome"]) for s in state["stages"]]
    assert stages == [("recipe_match", "no_match"), ("solved_example_rag", "no_match"), ("llm_fallback", "planned")]
    assert state["llm_calls"][0]["tokens_in"] == 1200 and state["llm_calls"][0]["model"] == "fake:planner"
    prompt = model.prompts[0]
    assert "### must_read:0:README.md" in prompt and "widget" in prompt and "Replace the first heading" in prompt
    assert "do-not-leak" not in prompt and "docs/guide.md" in prompt  # may_read is offered, not loaded
    record = ProvenanceStore(settings.home).get(state["run_id"])
    assert record.kind == "run" and record.status == "succeeded"
    assert [s.stage for s in record.stages] == ["recipe_match", "solved_example_rag", "llm_fallback"]
    assert Path(state["artifacts"]["patch"]).read_text() == state["patch"]

    second = dispatch(settings, "readme-title", repo, {}, {}, None, None)
    assert second["status"] == "succeeded"
    assert [(s["stage"], s["outcome"]) for s in second["stages"]] == [
        ("recipe_match", "no_match"), ("solved_example_rag", "retrieved")]
    assert second["patch"] == state["patch"] and second["llm_calls"] == []
    assert second["stages"][1]["example_run"] == state["run_id"]


def test_without_a_model_the_run_needs_llm_and_keeps_the_prompt(home: Path, tccm_dir: Callable[..., Path],
                                                                 make_repo: Callable[..., Path]) -> None:
    tccm_dir({"readme-title": README_TITLE})
    repo = make_repo(FILES)
    state = dispatch(Settings.from_env(), "readme-title", repo, {}, {}, None, None)
    assert state["status"] == "needs_llm" and not state.get("patch")
    prompt = Path(state["artifacts"]["prompt:task"]).read_text()
    assert "### must_read:0:README.md" in prompt and "# old title" in prompt and "do-not-leak" not in prompt
    assert "needs an LLM" in Path(state["artifacts"]["report"]).read_text()


def test_llm_may_read_request_is_loaded_and_logged(home: Path, tccm_dir: Callable[..., Path],
                                                   make_repo: Callable[..., Path]) -> None:
    tccm_dir({"readme-title": README_TITLE})
    repo = make_repo(FILES)
    asking = {**PLAN, "edits": [], "requests": ["may_read:0:docs/guide.md"]}
    model = fake_planner(asking, PLAN)
    state = dispatch(Settings.from_env(), "readme-title", repo, {}, {}, model, "fake:planner")
    assert state["status"] == "succeeded" and len(state["llm_calls"]) == 2
    assert [(r["entry"], r["outcome"]) for r in state["requests"]] == [("may_read:0:docs/guide.md", "loaded")]
    assert "### may_read:0:docs/guide.md" in model.prompts[1] and "# Guide" in model.prompts[1]
    record = ProvenanceStore(Settings.from_env().home).get(state["run_id"])
    assert {e.id: e.status for e in record.entries}["may_read:0:docs/guide.md"] == "requested"


def test_llm_plan_that_does_not_apply_fails_cleanly(home: Path, tccm_dir: Callable[..., Path],
                                                    make_repo: Callable[..., Path]) -> None:
    tccm_dir({"readme-title": README_TITLE})
    repo = make_repo(FILES)
    wrong = {**PLAN, "edits": [{"file": "README.md", "old": "# not there", "new": "# x"}]}
    state = dispatch(Settings.from_env(), "readme-title", repo, {}, {}, fake_planner(wrong), "fake:planner")
    assert state["status"] == "failed" and not state.get("patch")
    assert state["stages"][-1]["outcome"] == "rejected" and "occurs 0 times" in state["stages"][-1]["reason"]
