"""End to end: an item whose written Dockerfile fails a build check is blocked, never succeeded (issue 29 §1)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from planner.config import Settings
from planner.run.dispatch import dispatch

API = """\
FROM python:3.12-slim
RUN apt-get update && apt-get install -y --no-install-recommends curl && rm -rf /var/lib/apt/lists/*
COPY app.py /app/app.py
CMD ["python", "/app/app.py"]
"""


def test_a_mapping_to_a_name_wolfi_lacks_blocks_the_item_at_its_line(
        home: Path, make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo({"api/Dockerfile": API, "api/app.py": "print('hi')\n"})
    mapping = tmp_path / "map.yaml"
    mapping.write_text("packages:\n  curl: [curl-from-nowhere]\n")
    state = dispatch(Settings.from_env(), "distroless-migration", repo, {"mapping": str(mapping)}, {})
    [outcome] = state["outcomes"]
    assert outcome["status"] == "blocked" and state["status"] != "succeeded"
    [blocker] = outcome["blockers"]
    assert (blocker["kind"], blocker["file"], blocker["line"]) == ("check-failed", "api/Dockerfile", 2)
    assert "apk add curl-from-nowhere" in blocker["message"] and "mapping file" in blocker["fix"]
    assert "curl-from-nowhere" not in state.get("patch", "")  # a blocked item's edits stay out of the patch
