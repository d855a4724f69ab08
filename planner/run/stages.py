"""The chain's three nodes. Each sees only the bundle (never the full RepoContext),
records its outcome and reason, and hands on a plan or the reason there is none.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from planner import service
from planner.bundle import builder
from planner.bundle.model import Bundle
from planner.bundle.request import request
from planner.bundle.view import open_view, reader
from planner.chain import llm
from planner.chain.recipes import Decline, RepoFiles
from planner.chain.work import WorkItem
from planner.errors import BudgetError
from planner.patch.plan import EditError, Plan, apply_edits
from planner.policy.enforce import from_state
from planner.recipes import stage as yaml_recipes
from planner.recipes.engine import RecipeError
from planner.run.context import NodeRuntime
from planner.run.gates import paths
from planner.run.state import WorkState
from planner.run.taskmodule import for_tccm
from planner.store.examples import DEFAULT_THRESHOLD, SolvedExamples
from planner.tccm.model import TCCM, Budget
from repocontext.store import RepoContextStore


def _stage(item: WorkItem, stage: str, outcome: str, reason: str, **extra: Any) -> dict[str, Any]:
    return {"item": item.id, "stage": stage, "outcome": outcome, "reason": reason, **extra}


def plan_problem(plan: Plan, repo: str) -> str | None:
    """Why `plan`'s edits do not apply to the repository's files, or None when they do."""
    refused = paths.refusals(repo, paths.edit_files(plan.edits))
    if refused:
        return "; ".join(refused.values())
    try:
        apply_edits(reader(repo), plan.edits)
    except EditError as exc:
        return str(exc)
    return None


def recipes_first(tccm: dict[str, Any]) -> bool:
    """A class with recipes and no flow: its recipes run even when must_read does not fit (they read whole
    files); the llm_fallback stage then refuses with the budget's reason. A flow asks the LLM in its own
    states, so a flow class stays over budget as before."""
    return bool(tccm.get("recipes")) and not tccm.get("flow")


def fingerprint(task_class: str, item: WorkItem, bundle: Bundle) -> str:
    """The text a solved example is filed and found under."""
    return f"{task_class}\n{item.title}\n{json.dumps(item.data, sort_keys=True)}\n{bundle.text}"


def scope_bundle(state: WorkState, runtime: NodeRuntime) -> dict[str, Any]:
    """Build the item's own bundle with its narrowed inputs (e.g. package=requests, dockerfile=app/Dockerfile),
    so every `${inputs.x}` key is scoped to this item; over budget is judged here, per item."""
    item = WorkItem.model_validate(state["item"])
    inputs = {**state["inputs"], **item.inputs}
    if not item.inputs:
        return {}  # the run's bundle is the item's
    note: dict[str, str] = {}
    try:
        bundle, _, record = service.build_bundle(runtime.context.settings, state["task_class"], Path(state["repo"]),
                                                 inputs)
    except BudgetError as exc:
        if recipes_first(state["tccm"]):  # the recipes run on whole files; only the LLM needs must_read whole
            bundle, _, record = service.build_bundle(runtime.context.settings, state["task_class"],
                                                     Path(state["repo"]), inputs, demoted=True)
            note = {"budget_note": exc.message}
        else:
            runtime.context.on_event("stage", {"item": item.id, "stage": "scope_bundle", "outcome": "over budget"})
            # A recipe decides from the item's data and whole files, not from what fits an LLM's budget: it still
            # gets a bundle (the same entries, uncapped); only an LLM, which would see it, is never asked.
            uncapped = _uncapped_bundle(state, runtime.context.settings.home, inputs)
            return {"inputs": inputs, "bundle": uncapped.model_dump(mode="json"), "over_budget": exc.message,
                    "stages": [_stage(item, "scope_bundle", "over_budget", f"{exc.message}; recipes still run on "
                                      "the uncapped bundle, no model is asked")]}
    summary: dict[str, Any] = {"item": item.id, "inputs": inputs, "sha256": bundle.sha256,
                               "totals": bundle.totals.model_dump(),
                               "entries": [e.model_dump() for e in bundle.entries]}
    if "unavailable" in (record.hot_views or ""):  # Redis failed for this item: the run's provenance says so
        summary["hot_views"] = record.hot_views
    shown = ", ".join(f"{k}={v}" for k, v in sorted(item.inputs.items()))
    return {**note, "bundle": bundle.model_dump(mode="json"), "inputs": inputs, "bundles": [summary],
            "stages": [_stage(item, "scope_bundle", "built", f"inputs {shown}: {bundle.totals.tokens} tokens")]}


def _declared(state: WorkState, runtime: NodeRuntime,
              item: WorkItem) -> dict[str, Any] | tuple[list[Decline], dict[str, Any]]:
    """The TCCM's own recipes (YAML): the stage's update when they made a plan or cannot run, else the
    declines they leave (findings at file:line) for the Python recipes' turn."""
    tccm = TCCM.model_validate(state["tccm"])
    policy, _ = from_state(state["tccm"], state["inputs"])
    try:
        plan, declines, record = yaml_recipes.run(tccm, state["repo"], runtime.context.settings.home,
                                                  state["inputs"], item, policy is not None and policy.network)
    except RecipeError as exc:
        return {"plan": None, "pending": f"a recipe could not run: {exc}", "error": str(exc),
                "stages": [_stage(item, "recipe_match", "failed", str(exc))]}
    if plan is None:
        return declines, record
    if state.get("budget_note"):
        plan.notes.append(f"must_read does not fit the budget ({state['budget_note']}); the recipes read whole "
                          "files, so it did not limit them")
    problem = plan_problem(plan, state["repo"])
    if problem:
        return [*declines, Decline(reason=f"{plan.recipe}: matched, but {problem}")], record
    runtime.context.on_event("stage", {"item": item.id, "stage": "recipe_match", "outcome": plan.recipe})
    return {"plan": plan.model_dump(), "stages": [_stage(
        item, "recipe_match", "matched", f"{plan.recipe} applies", recipe=plan.recipe, **record)]}


def _nothing_to_do(state: WorkState, tried: list[Decline]) -> bool:
    """Declared recipes that matched nothing, no finding, no flow: the class does not apply here. Only a
    class with recipes can say so; one without leaves the item to examples and the LLM as before."""
    tccm = state["tccm"]
    return bool(tccm.get("recipes")) and not tried and not tccm.get("flow")


def _uncapped_bundle(state: WorkState, home: Path, inputs: dict[str, str]) -> Bundle:
    tccm = TCCM.model_validate(state["tccm"])
    uncapped = tccm.model_copy(update={"budget": Budget(max_files=100_000, max_tokens=2_000_000,
                                                        per_file_max_tokens=2_000_000)})
    return builder.build(uncapped, open_view(Path(state["repo"]), RepoContextStore(home)), inputs)


def recipe_match(state: WorkState, runtime: NodeRuntime) -> dict[str, Any]:
    item, bundle = WorkItem.model_validate(state["item"]), Bundle.model_validate(state["bundle"])
    recipes = for_tccm(state["tccm"]).recipes
    tried: list[Decline] = []
    looked: dict[str, Any] = {}
    if state["tccm"].get("recipes"):
        declared = _declared(state, runtime, item)
        if isinstance(declared, dict):
            return declared
        tried += declared[0]
        looked = declared[1]
    files = RepoFiles(state["repo"], bundle)
    for recipe in recipes:
        why = recipe.match(bundle, item, files)
        if why is not None:
            decline = why if isinstance(why, Decline) else Decline(reason=why)
            tried.append(decline.model_copy(update={"reason": f"{recipe.ref}: {decline.reason}"}))
            continue
        plan = recipe.apply(bundle, item, files).model_copy(update={"source": "recipe", "recipe": recipe.ref})
        problem = plan_problem(plan, state["repo"])
        if problem:
            tried.append(Decline(reason=f"{recipe.ref}: matched, but {problem}"))
            continue
        runtime.context.on_event("stage", {"item": item.id, "stage": "recipe_match", "outcome": recipe.ref})
        if state.get("over_budget"):
            plan.notes.append(f"the bundle an LLM would get for this item is over budget ({state['over_budget']}); "
                              "the recipe worked from the RepoContext's data and the repository's files")
        return {"plan": plan.model_dump(), "stages": [_stage(
            item, "recipe_match", "matched", f"{recipe.ref} applies", recipe=recipe.ref, reads=files.reads)]}
    if _nothing_to_do(state, tried):
        why = "its recipes match nothing here: " + "; ".join(
            f"{r['id']}: {r['files']} file(s) considered" if r["files"] else f"{r['id']}: no file matches its files"
            for r in looked.get("recipes", []))
        return {"plan": None, "pending": "not_applicable", "error": why,
                "stages": [_stage(item, "recipe_match", "not_applicable", why, reads=files.reads, **looked)]}
    reason = "; ".join(d.reason for d in tried) or "no recipes for this task class"
    if state.get("over_budget"):  # no model may see an over-budget bundle: the item ends here, saying why
        return {"plan": None, "declined": [d.model_dump() for d in tried], "pending": "over_budget",
                "error": state["over_budget"], "stages": [_stage(item, "recipe_match", "no_match", reason,
                                                                 reads=files.reads)]}
    return {"plan": None, "declined": [d.model_dump() for d in tried],
            "stages": [_stage(item, "recipe_match", "no_match", reason, reads=files.reads)]}


def solved_example_rag(state: WorkState, runtime: NodeRuntime) -> dict[str, Any]:
    item, bundle = WorkItem.model_validate(state["item"]), Bundle.model_validate(state["bundle"])
    threshold = float(os.environ.get("PLANNER_RAG_THRESHOLD") or DEFAULT_THRESHOLD)
    store = SolvedExamples(runtime.context.settings.home / "examples.sqlite")
    try:
        hits = store.search(state["task_class"], fingerprint(state["task_class"], item, bundle), threshold)
    finally:
        store.close()
    rejected: list[str] = []
    for hit in hits:
        plan = hit.plan.model_copy(update={"source": "solved_example",
                                           "data": {**hit.plan.data, "example_run": hit.run_id, "score": hit.score}})
        problem = plan_problem(plan, state["repo"])
        if problem:
            rejected.append(f"{hit.run_id} (similarity {hit.score}) does not apply: {problem}")
            continue
        runtime.context.on_event("stage", {"item": item.id, "stage": "solved_example_rag", "outcome": hit.run_id})
        return {"plan": plan.model_dump(), "stages": [_stage(
            item, "solved_example_rag", "retrieved", f"run {hit.run_id}, similarity {hit.score} ≥ {threshold}",
            example_run=hit.run_id, score=hit.score)]}
    reason = "; ".join(rejected) or f"no solved example with similarity ≥ {threshold}"
    return {"stages": [_stage(item, "solved_example_rag", "no_match", reason)]}


def _load_requests(state: WorkState, home: Path, bundle: Bundle,
                   wanted: list[str]) -> tuple[Bundle, list[dict[str, Any]]]:
    tccm = TCCM.model_validate(state["tccm"])
    view = open_view(Path(state["repo"]), RepoContextStore(home))
    records = []
    for entry_id in wanted:
        bundle, record = request(bundle, tccm, view, entry_id, by="llm_fallback")
        records.append(record)
    return bundle, records


def answered(state: WorkState, runtime: NodeRuntime, item: WorkItem, prompt: str) -> dict[str, Any]:
    """The plan a person gave for this item (`planner runs answer`), checked as the model's would be."""
    answers = runtime.context.answers or {}
    raw = answers.get(item.id, answers.get("*"))
    ledger = {"item": item.id, "model": "answer (planner runs answer)", "tokens_in": 0, "tokens_out": 0,
              "estimated": False, "cost_usd": None, "ok": raw is not None}
    if raw is None:
        return {"pending": "needs_llm", "prompt": prompt, "llm_calls": [ledger], "stages": [_stage(
            item, "llm_fallback", "needs_llm", f"the answer file has no plan for item {item.id!r}")]}
    plan = Plan(**llm.LLMPlan.model_validate(raw).model_dump(), source="llm",
                data={"answered_by": "planner runs answer"})
    problem = plan_problem(plan, state["repo"])
    if problem:
        return {"pending": f"the answered plan was rejected: {problem}", "prompt": prompt, "llm_calls": [ledger],
                "stages": [_stage(item, "llm_fallback", "rejected", problem)]}
    return {"plan": plan.model_dump(), "prompt": prompt, "llm_calls": [ledger], "stages": [_stage(
        item, "llm_fallback", "planned", f"answered by hand: {len(plan.edits)} edits")]}


def llm_fallback(state: WorkState, runtime: NodeRuntime) -> dict[str, Any]:
    item, bundle = WorkItem.model_validate(state["item"]), Bundle.model_validate(state["bundle"])
    tccm = state["tccm"]

    def prompt_for(current: Bundle) -> str:
        return llm.build_prompt(state["task_class"], tccm["description"], tccm.get("worker"), state["inputs"],
                                item, current)

    prompt = prompt_for(bundle)
    model = runtime.context.model
    if state.get("budget_note"):  # a recipe class over budget: the LLM would not see what must_read promises
        why = f"its recipes made no plan, and its must_read does not fit the budget: {state['budget_note']}"
        return {"pending": "over_budget", "error": why, "stages": [_stage(item, "llm_fallback", "over_budget", why)]}
    if runtime.context.answers is not None:
        return answered(state, runtime, item, prompt)
    if model is None:
        return {"pending": "needs_llm", "prompt": prompt, "stages": [_stage(
            item, "llm_fallback", "needs_llm", "no model configured (--model provider:name or PLANNER_MODEL)")]}
    calls: list[dict[str, Any]] = []
    requests: list[dict[str, Any]] = []
    plan, ledger, error = llm.ask(model, runtime.context.model_name, prompt)
    calls.append(ledger)
    if plan is not None and plan.requests:  # one round of may_read requests, then ask again
        bundle, requests = _load_requests(state, runtime.context.settings.home, bundle, plan.requests)
        prompt = prompt_for(bundle)
        plan, ledger, error = llm.ask(model, runtime.context.model_name, prompt)
        calls.append(ledger)
    update: dict[str, Any] = {"prompt": prompt, "llm_calls": [{**c, "item": item.id} for c in calls],
                              "requests": [{**r, "item": item.id} for r in requests], "bundle": bundle.model_dump()}
    problem = error or (plan_problem(plan, state["repo"]) if plan else "no plan")
    if plan is not None and not error and paths.refusals(state["repo"], paths.edit_files(plan.edits)):
        # passed on, so the item ends blocked with a blocker naming each file (never read, never written)
        return {**update, "plan": plan.model_dump(), "stages": [_stage(item, "llm_fallback", "refused", str(problem))]}
    if plan is None or problem:
        return {**update, "pending": f"the LLM plan was rejected: {problem}",
                "stages": [_stage(item, "llm_fallback", "rejected", str(problem))]}
    runtime.context.on_event("stage", {"item": item.id, "stage": "llm_fallback", "outcome": "planned"})
    reason = f"{ledger['model']}: {len(plan.edits)} edits, cites {len(plan.used_entries)} entries"
    return {**update, "plan": plan.model_dump(), "stages": [_stage(item, "llm_fallback", "planned", reason)]}
