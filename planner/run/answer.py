"""Going on past `needs_llm` without a model: a person answers with a plan, or seeds a solved example.

`planner runs answer RUN --plan FILE` runs the needs_llm run's task class again on the same repository
and inputs, with FILE's plan standing where the model's answer would (the same schema: summary, steps,
edits, used_entries, notes), so it passes the same checks: the edits must apply, the policy gate, the
`git apply --check` gate, the report and provenance. FILE is JSON or YAML: one plan for every item, or
`items: {ITEM_ID: plan}`.

`planner examples add TASK_CLASS --repo R --patch FILE` files a hand-made patch as a solved example,
under the fingerprint the RAG stage will look for on that repository, after checking that it applies.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import yaml
from pydantic import ValidationError

from planner import service
from planner.bundle.model import Bundle
from planner.chain.llm import LLMPlan
from planner.chain.work import WorkItem
from planner.config import Settings
from planner.errors import BudgetError, ExitCode, PlannerError
from planner.patch.parse import PatchError, edits_from_patch
from planner.patch.plan import Plan
from planner.run.stages import fingerprint, plan_problem
from planner.store.examples import SolvedExamples
from planner.store.runs import RunStore


def _load(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PlannerError(f"--plan {path}: {exc.strerror}") from None
    try:
        return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise PlannerError(f"--plan {path}: not JSON/YAML: {exc}") from None


def read_answers(path: Path) -> dict[str, Any]:
    """item id → plan ("*" for every item), each checked against the schema the LLM answers in."""
    doc = _load(path)
    if not isinstance(doc, dict):
        raise PlannerError(f"--plan {path}: expected a plan (summary, edits, ...) or items: {{ITEM_ID: plan}}")
    answers = doc["items"] if set(doc) == {"items"} and isinstance(doc["items"], dict) else {"*": doc}
    for item, plan in answers.items():
        try:
            LLMPlan.model_validate(plan)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "plan"
            raise PlannerError(f"--plan {path}: item {item}: {where}: {first['msg']}") from None
    return answers


def answer(settings: Settings, run_id: str, plan_file: Path,
           on_event: Callable[[str, dict[str, Any]], None] | None = None) -> dict[str, Any]:
    from planner.run.dispatch import dispatch  # the graph stack, only for this command

    row = RunStore(settings.home).get(run_id)
    if row["status"] != "needs_llm":
        raise PlannerError(f"run {row['id']} is {row['status']}, not needs_llm: there is nothing to answer")
    answers = read_answers(plan_file)
    options = {k: v for k, v in row["options"].items() if k != "model"}
    return dispatch(settings, row["task_class"], Path(row["repo"]), row["inputs"],
                    {**options, "answers": row["id"]}, on_event=on_event, answers=answers)


def _items_and_bundles(settings: Settings, task_class: str, root: Path,
                       inputs: dict[str, str]) -> list[tuple[WorkItem, Bundle]]:
    """The work items a dispatch of `task_class` on `root` would fan out over, each with the bundle its
    solved_example_rag stage will fingerprint: the dispatch's own head nodes (load the TCCM, gather the
    RepoContext when it is missing or stale, list the work, build the run's bundle, split it), then each
    item's bundle scoped by its inputs. An example filed against a bootstrap bundle (never gathered) or the
    run-level bundle would never be found again by the run it was made for."""
    from planner.run import supervisor
    from planner.run.context import RunContext
    from planner.run.stages import recipes_first
    from planner.run.state import RunState

    state: dict[str, Any] = {"task_class": task_class, "repo": str(root), "inputs": inputs, "options": {}}
    run_state = cast(RunState, state)  # the nodes' RunState in a plain dict, as shortcut.head keeps it
    runtime = SimpleNamespace(context=RunContext(settings))
    for node in (supervisor.load_tccm, supervisor.ensure_repocontext, supervisor.list_work,
                 supervisor.build_bundle):
        state.update(node(run_state, runtime) or {})
        if state.get("status") in ("failed", "over_budget"):
            raise PlannerError(str(state.get("error") or state["status"]),
                              ExitCode(int(state.get("exit_code") or ExitCode.FAILED)))
    state.update(supervisor.split(run_state))
    run_bundle = Bundle.model_validate(state["bundle"])
    found = []
    for raw in state.get("items") or []:
        item = WorkItem.model_validate(raw)
        if not item.inputs:
            found.append((item, run_bundle))
            continue
        scoped = {**inputs, **item.inputs}
        try:
            bundle, _, _ = service.build_bundle(settings, task_class, root, scoped)
        except BudgetError:
            if not recipes_first(state["tccm"]):
                continue  # over budget: that item goes straight to its outcome, no example is looked up
            bundle, _, _ = service.build_bundle(settings, task_class, root, scoped, demoted=True)
        found.append((item, bundle))
    return found


def add_example(settings: Settings, task_class: str, repo: Path, patch_file: Path,
                inputs: dict[str, str]) -> dict[str, Any]:
    """File a hand-made patch as a solved example for `task_class`, as the RAG stage will look it up."""
    root = service.repo_root(repo)
    try:
        patch = patch_file.read_text(encoding="utf-8")
        edits = edits_from_patch(patch)
    except OSError as exc:
        raise PlannerError(f"--patch {patch_file}: {exc.strerror}") from None
    except PatchError as exc:
        raise PlannerError(f"--patch {patch_file}: {exc}") from None
    plan = Plan(summary=f"hand-made patch {patch_file.name}", edits=edits, source="solved_example",
                notes=[f"seeded with planner examples add from {patch_file.name}"])
    problem = plan_problem(plan, str(root))
    if problem:
        raise PlannerError(f"--patch {patch_file} does not apply to {root}: {problem}")
    items = _items_and_bundles(settings, task_class, root, inputs)
    if not items:
        raise PlannerError(f"a dispatch of {task_class} on {root} has no work item to file the example under")
    run_id = "example-" + datetime.now(UTC).strftime("%Y%m%d-%H%M%S-%f")
    store = SolvedExamples(settings.home / "examples.sqlite")
    try:
        for item, bundle in items:
            store.add(task_class, fingerprint(task_class, item, bundle), plan, patch, run_id)
    finally:
        store.close()
    return {"id": run_id, "task_class": task_class, "repo": str(root), "items": [i.id for i, _ in items],
            "edits": len(edits), "files": sorted({e.file for e in edits})}
