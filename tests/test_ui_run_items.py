"""A run page shows what needs a person: the diff a policy refused, and the prompt a needs_llm item saved."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fastapi.testclient import TestClient

from planner.config import Settings
from planner.run.dispatch import dispatch
from planner.ui.app import create_app

ADVISORIES = str(Path(__file__).resolve().parents[1] / "examples" / "advisories")


def test_a_blocked_item_shows_the_refused_diff(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo({"requirements.txt": "PyYAML==3.13\n"})
    state = dispatch(Settings.from_env().for_one_run(), "vulnerability-remediation", repo, {},
                     {"advisories": ADVISORIES})
    assert state["status"] == "blocked" and state["patch"] == ""
    outcome = state["outcomes"][0]
    assert "-PyYAML==3.13\n+PyYAML==5.4" in outcome["refused_patch"]
    body = TestClient(create_app(Settings.from_env())).get(f"/runs/{state['run_id']}").text
    assert "No patch." in body  # the run's patch is empty: nothing refused enters it
    assert "The diff the policy refused" in body and 'class="diff refused" data-file="requirements.txt"' in body
    assert "+PyYAML==5.4" in body


def test_a_needs_llm_item_shows_its_saved_prompt(make_repo: Callable[..., Path], home: Path,
                                                tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"readme-fixer": """
        task_class: readme-fixer
        version: 1
        description: Fix the README's title.
        must_read:
          - glob: README.md
        budget: {max_files: 5, max_tokens: 4000, per_file_max_tokens: 2000}
    """})
    repo = make_repo({"README.md": "# Widgit\n"})
    state = dispatch(Settings.from_env().for_one_run(), "readme-fixer", repo, {}, {})
    assert state["status"] == "needs_llm"
    prompt_path = next(v for k, v in state["artifacts"].items() if k.startswith("prompt:"))
    body = TestClient(create_app(Settings.from_env())).get(f"/runs/{state['run_id']}").text
    assert "The saved prompt" in body and prompt_path in body and "# Widgit" in body
