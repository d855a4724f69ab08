"""A YAML-only task class with its own flow runs per work item on real LangGraph graphs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fake_llm import fake_planner

from planner.config import Settings
from planner.dispatch import dispatch

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


def plan(title: str, file: str = "README.md", old: str = "# old title") -> dict[str, object]:
    return {"summary": f"Title the README {title}", "steps": ["rename the heading"],
            "edits": [{"file": file, "old": old, "new": f"# {title}"}],
            "used_entries": ["must_read:0:README.md"], "notes": []}


def test_flow_takes_the_expected_path(home: Path, tccm_dir: Callable[..., Path],
                                      make_repo: Callable[..., Path]) -> None:
    tccm_dir({"readme-fixer": FIXER.replace("MAX", "10")})
    repo = make_repo(FILES)
    model = fake_planner(plan("widgit"), plan("widget"))
    state = dispatch(Settings.from_env(), "readme-fixer", repo, {}, {}, model, "fake:planner")
    assert state["status"] == "succeeded", state.get("error")
    assert "-# old title\n+# widget\n" in state["patch"]
    flow = [(s["stage"], s["outcome"]) for s in state["stages"] if s["stage"].startswith("flow:")]
    assert flow == [("flow:triage", "routed"), ("flow:baseline", "failed"), ("flow:propose", "planned"),
                    ("flow:test", "failed"), ("flow:judge", "routed"), ("flow:propose", "planned"),
                    ("flow:test", "passed"), ("flow:judge", "routed")]
    assert "exit" in model.prompts[1] and "widgit" in model.prompts[1]  # the failed run is shown to the model
    assert [c["state"] for c in state["llm_calls"]] == ["propose", "propose"]
