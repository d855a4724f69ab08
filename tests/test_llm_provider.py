"""The LLM path through a real provider client: `--model openai:gpt-4o-mini` over HTTP to a local server with
recorded answers — a server error retried, structured output parsed, a may_read request answered with a second
call, tokens and cost from the provider's usage in the ledger."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("langchain_openai", reason="langchain-openai is not installed (pip install -e '.[llm]')")

from openai_server import plan_answer, recorded_openai, server_error

TCCM = """
task_class: readme-title
version: 1
description: Title the README after the project.
must_read:
  - glob: README.md
    reason: the file to change
may_read:
  - glob: docs/guide.md
    reason: the house style for titles
budget: {max_files: 5, max_tokens: 4000, per_file_max_tokens: 2000}
"""


def test_a_real_openai_client_plans_through_a_retry_and_a_may_read_request(
        make_repo: Callable[..., Path], home: Path, tccm_dir: Callable[..., Path]) -> None:
    tccm_dir({"readme-title": TCCM})
    repo = make_repo({"README.md": "# old title\n", "docs/guide.md": "Titles are the package name: widget.\n"})
    answers = [
        server_error(),  # the client retries a 500 by itself
        plan_answer(summary="need the style guide", requests=["may_read:0:docs/guide.md"]),
        plan_answer(summary="retitle", used_entries=["must_read:0:README.md", "may_read:0:docs/guide.md"],
                    edits=[{"file": "README.md", "old": "# old title", "new": "# widget"}]),
    ]
    with recorded_openai(answers) as (base, seen):
        done = subprocess.run(
            [sys.executable, "-m", "planner", "dispatch", "readme-title", "--repo", str(repo), "--model",
             "openai:gpt-4o-mini", "--json"], capture_output=True, text=True, timeout=300,
            env={**os.environ, "PLANNER_DAEMON": "off", "OPENAI_BASE_URL": base, "OPENAI_API_KEY": "sk-test-local"})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "succeeded" and "-# old title\n+# widget\n" in result["patch"]
    assert len(seen) == 3 and all(s["path"] == "/v1/chat/completions" for s in seen)
    assert seen[0]["auth"] == "Bearer sk-test-local" and seen[0]["body"] == seen[1]["body"]  # the retry, unchanged
    assert seen[1]["body"]["response_format"]["type"] == "json_schema"  # structured output, as the provider does it
    first, second = (s["body"]["messages"][-1]["content"] for s in seen[1:])
    assert "Titles are the package name" not in first and "Titles are the package name" in second
    calls = result["llm_calls"]
    assert [c["tokens_in"] for c in calls] == [1200, 1200] and not any(c["estimated"] for c in calls)
    assert all(c["cost_usd"] and c["model"] == "openai:gpt-4o-mini" for c in calls)
