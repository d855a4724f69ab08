"""The dispatch tool's run: what `planner dispatch [--apply]` does, with its events as progress lines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from planner.config import Settings

Progress = Callable[[str], None]


def describe(kind: str, data: dict[str, Any]) -> str | None:
    """One progress line per event worth telling (the CLI's live view, as plain text)."""
    if kind == "run":
        return f"run {data['run_id']}"
    if kind == "node" and not data.get("namespace"):
        return f"{data['node']} done"
    if kind == "stage":
        return f"{data['item']}: {data['stage']} → {data['outcome']}"
    if kind == "verify":
        return f"verifying with `{data['command']}`"
    return None


def run_dispatch(settings: Settings, task_class: str, repo: Path, inputs: dict[str, str], apply: bool,
                 progress: Progress) -> dict[str, Any]:
    # Imported here: the graph and LangChain cost ~1 s, which the server's start-up need not pay.
    from planner.chain.llm import init_model
    from planner.run.apply import apply_run, check_clean
    from planner.run.dispatch import dispatch, run_options
    from planner.store.runs import run_coverage, run_items

    spec = settings.model
    model = init_model(spec) if spec else None
    options = run_options(settings)
    if apply and repo.is_dir():
        check_clean(repo.resolve())  # refused before the run, as the CLI's --apply is

    def on_event(kind: str, data: dict[str, Any]) -> None:
        line = describe(kind, data)
        if line:
            progress(line)

    state = dispatch(settings, task_class, repo, inputs, options, model, spec, on_event)
    if apply and state.get("status") == "succeeded" and state.get("patch"):
        apply_run(settings, task_class, state)
    artifacts = state.get("artifacts") or {}
    return {"run_id": state.get("run_id"), "status": state.get("status"), "error": state.get("error"),
            "patch": state.get("patch", ""), "report_markdown": state.get("report", ""), "items": run_items(state),
            "branch": state.get("branch"), "artifacts": artifacts, **run_coverage(state)}
