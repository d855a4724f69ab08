"""What each state type does when a flow reaches it. A runner gets the state's definition, the graph
state and the flow record (which it updates), and says where to go next and why.

- action: the LLM proposes a plan (structured output, citing bundle ids); under `planner runs answer`
  the answer file's plan stands in its place (checked the same way, given once); without a model a plan
  a recipe or solved example made is kept, else the item needs an LLM (its prompt is saved).
- decision: the first transition whose condition holds, else the default; or, with `choose: llm`,
  the model picks among the named transitions (no model: the default).
- recall: loads listed may_read/deferred entries into the item's bundle and brings in solved
  examples; each is a request in provenance.
- reflection: a short LLM note kept for later states (never in the patch); skipped without a model.
- annotation: a progress marker for the live view and provenance.
Side-effects are in effects.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from planner.bundle.model import Bundle
from planner.bundle.request import request
from planner.bundle.view import open_view
from planner.chain import llm
from planner.chain.work import WorkItem
from planner.flow.conditions import evaluate
from planner.flow.model import END, FlowState
from planner.run.context import RunContext
from planner.run.flowgraph.facts import FlowGraphState, facts
from planner.run.flowgraph.prompts import action_prompt, choice_prompt, reflection_prompt
from planner.run.stages import fingerprint, plan_problem  # the chain's own key and edit check
from planner.store.examples import SolvedExamples
from planner.tccm.model import TCCM
from repocontext.store import RepoContextStore


@dataclass
class Step:
    """A runner's answer: the state updates, the next state, and the outcome for provenance."""

    target: str
    outcome: str
    reason: str = ""
    update: dict[str, Any] = field(default_factory=dict)


@dataclass
class Visit:
    name: str
    spec: FlowState
    state: FlowGraphState
    record: dict[str, Any]
    runtime: Runtime[RunContext]

    @property
    def item(self) -> WorkItem:
        return WorkItem.model_validate(self.state["item"])

    def route(self) -> tuple[str, str]:
        """(target, why) from `next`, or the first transition that holds, or the default."""
        if self.spec.next:
            return self.spec.next, ""
        known = facts(self.state, self.record)
        for transition in self.spec.transitions or ():
            if transition.when and evaluate(transition.when, known):
                return transition.next, f"{transition.when} holds"
        return self.spec.default or END, "no transition holds: default"


def _ledger(visit: Visit, raw: Any, prompt: str, ok: bool) -> dict[str, Any]:
    context = visit.runtime.context
    return {**llm.ledger_entry(context.model, context.model_name, raw, prompt, ok), "item": visit.item.id,
            "state": visit.name}


def load_entries(visit: Visit, wanted: list[str], bundle: Bundle) -> tuple[Bundle, list[dict[str, Any]]]:
    """Request entries (ids, paths, keys, or selectors such as `glob:docs/**`) into the item's bundle."""
    tccm = TCCM.model_validate(visit.state["tccm"])
    view = open_view(Path(visit.state["repo"]), RepoContextStore(visit.runtime.context.settings.home))
    records = []
    for want in wanted:
        ids = [e.id for e in bundle.entries if e.selector == want] or [want]
        for entry_id in ids:
            bundle, record = request(bundle, tccm, view, entry_id, by=f"flow:{visit.name}")
            records.append({**record, "item": visit.item.id})
    return bundle, records


def action(visit: Visit) -> Step:
    model, state = visit.runtime.context.model, visit.state
    bundle = Bundle.model_validate(state["bundle"])
    prompt = action_prompt(visit.name, visit.spec, state, visit.record, bundle)
    if visit.runtime.context.answers is not None:  # `planner runs answer`: a person's plan in the model's place
        return _answered(visit, visit.runtime.context.answers, prompt)
    if model is None:
        kept = state.get("plan")
        if kept:
            target, why = visit.route()
            return Step(target, "kept", f"no model configured: kept the {kept.get('source')} plan; {why}")
        return Step(END, "needs_llm", "no model configured (--model provider:name or PLANNER_MODEL)",
                    {"pending": "needs_llm", "prompt": prompt})
    plan, ledger, error = llm.ask(model, visit.runtime.context.model_name, prompt)
    calls = [{**ledger, "item": visit.item.id, "state": visit.name}]
    requests: list[dict[str, Any]] = []
    if plan is not None and plan.requests:  # one round of requests, then ask again
        bundle, requests = load_entries(visit, plan.requests, bundle)
        prompt = action_prompt(visit.name, visit.spec, state, visit.record, bundle)
        plan, ledger, error = llm.ask(model, visit.runtime.context.model_name, prompt)
        calls.append({**ledger, "item": visit.item.id, "state": visit.name})
    update: dict[str, Any] = {"prompt": prompt, "llm_calls": calls, "requests": requests,
                              "bundle": bundle.model_dump(mode="json")}
    problem = error or (plan_problem(plan, state["repo"]) if plan else "no plan")
    visit.record["action"] = {"ok": not problem, "failed": bool(problem), "error": problem or ""}
    if plan is None or problem:
        update["pending"] = f"the LLM plan was rejected: {problem}"
        target, why = visit.route()
        return Step(target, "rejected", f"{problem}; {why}".rstrip("; "), update)
    update.update(plan=plan.model_dump(), pending="")
    visit.record.update(apply={}, verify={}, regenerate={})  # a new plan: not applied, relocked nor tested yet
    target, why = visit.route()
    reason = f"{len(plan.edits)} edits, cites {len(plan.used_entries)} entries" + (f"; {why}" if why else "")
    return Step(target, "planned", reason, update)


def _answered(visit: Visit, answers: dict[str, Any], prompt: str) -> Step:
    """The answer file's plan for this item, taken as the model's answer would be: checked to apply, then on
    along the flow (its check, tests and policy). It is one answer: a flow that comes back to this state
    after it (refused, tests failed) ends there with that plan, for the gate and the report to judge."""
    state = visit.state
    plan, ledger = llm.answered(answers, visit.item.id)
    calls = [{**ledger, "state": visit.name}]
    if plan is None:
        return Step(END, "needs_llm", f"the answer file has no plan for item {visit.item.id!r}",
                    {"pending": "needs_llm", "prompt": prompt, "llm_calls": calls})
    if visit.record["action"].get("answered"):
        last = visit.record["apply"].get("error") or ("the tests failed" if visit.record["verify"].get("failed")
                                                       else "the flow came back for another plan")
        return Step(END, "answered", f"the answered plan was already tried ({last}); an answer is not asked again")
    problem = plan_problem(plan, state["repo"])
    visit.record["action"] = {"ok": not problem, "failed": bool(problem), "error": problem or "", "answered": True}
    update: dict[str, Any] = {"prompt": prompt, "llm_calls": calls}
    if problem:
        return Step(END, "rejected", f"the answered plan was rejected: {problem}",
                    {**update, "pending": f"the answered plan was rejected: {problem}"})
    update.update(plan=plan.model_dump(), pending="")
    visit.record.update(apply={}, verify={}, regenerate={})  # a new plan: not applied, relocked nor tested yet
    target, why = visit.route()
    reason = f"answered by hand: {len(plan.edits)} edits" + (f"; {why}" if why else "")
    return Step(target, "planned", reason, update)


class Choice(BaseModel):
    """The structured answer of an LLM decision."""

    next: str = Field(description="the name of the exit to take")
    why: str = Field(default="", description="one line: why")


def decision(visit: Visit) -> Step:
    if visit.spec.choose != "llm":
        target, why = visit.route()
        return Step(target, "routed", why)
    model = visit.runtime.context.model
    default = visit.spec.default or END
    if model is None:
        return Step(default, "default", "no model configured to choose: default")
    prompt = choice_prompt(visit.name, visit.spec, visit.state, visit.record)
    raw, chosen, error = None, None, ""
    try:
        answer = model.with_structured_output(Choice, include_raw=True).invoke(prompt)
        raw, chosen = answer.get("raw"), answer.get("parsed")
    except Exception as exc:  # noqa: BLE001 - a provider error falls back to the default, recorded
        error = f"model call failed: {exc.__class__.__name__}: {exc}"
    allowed = {t.next for t in visit.spec.transitions or ()}
    update = {"llm_calls": [_ledger(visit, raw, prompt, chosen is not None)]}
    if chosen is None or chosen.next not in allowed:
        why = error or (f"the model chose {chosen.next!r}, not an exit" if chosen else "the answer did not parse")
        return Step(default, "default", f"{why}: default", update)
    return Step(chosen.next, "chosen", chosen.why or "chosen by the model", update)


def recall(visit: Visit) -> Step:
    bundle = Bundle.model_validate(visit.state["bundle"])
    bundle, requests = load_entries(visit, list(visit.spec.may_read or ()), bundle)
    found = _examples(visit, bundle) if visit.spec.examples else []
    visit.record["recalled"] = [*visit.record["recalled"], *found]
    requests += [{"entry": f"example:{e['run_id']}", "by": f"flow:{visit.name}", "outcome": "recalled",
                  "score": e["score"], "tokens": 0, "item": visit.item.id} for e in found]
    loaded = sum(r["outcome"] == "loaded" for r in requests)
    reason = f"{loaded} entr{'y' if loaded == 1 else 'ies'} loaded, {len(found)} solved example(s)"
    return Step(visit.route()[0], "recalled", reason, {"bundle": bundle.model_dump(mode="json"),
                                                      "requests": requests})


def _examples(visit: Visit, bundle: Bundle) -> list[dict[str, Any]]:
    store = SolvedExamples(visit.runtime.context.settings.home / "examples.sqlite")
    try:
        hits = store.search(visit.state["task_class"], fingerprint(visit.state["task_class"], visit.item, bundle),
                            threshold=0.0, limit=visit.spec.examples or 1)
    finally:
        store.close()
    return [{"run_id": h.run_id, "score": h.score, "summary": h.plan.summary, "patch": h.patch[:4000]} for h in hits]


def reflection(visit: Visit) -> Step:
    model = visit.runtime.context.model
    if model is None:
        return Step(visit.route()[0], "skipped", "no model configured")
    limit = visit.spec.word_limit or 150
    prompt = reflection_prompt(visit.name, visit.spec, visit.state, visit.record, limit)
    try:
        raw = model.invoke(prompt)
    except Exception as exc:  # noqa: BLE001 - a failed note is recorded; the flow goes on without it
        return Step(visit.route()[0], "failed", f"model call failed: {exc.__class__.__name__}: {exc}")
    text = " ".join(str(getattr(raw, "content", "") or "").split()[:limit])
    visit.record["notes"] = [*visit.record["notes"], {"state": visit.name, "text": text}]
    return Step(visit.route()[0], "noted", f"{len(text.split())} words",
                {"llm_calls": [_ledger(visit, raw, prompt, bool(text))]})


def annotation(visit: Visit) -> Step:
    return Step(visit.route()[0], "marked", visit.spec.note or visit.spec.description or visit.name)


RUNNERS: dict[str, Callable[[Visit], Step]] = {"action": action, "decision": decision, "recall": recall,
                                               "reflection": reflection, "annotation": annotation}
