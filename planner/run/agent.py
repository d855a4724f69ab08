"""What an agent asks of the planner between runs (served by `planner mcp`): a bundle narrowed to its own
budget, a may_read entry on request, decisions recorded against a run, and searches over past work.

Everything here goes through the same service functions as the CLI, so messages, provenance and secret
denial are the CLI's own; only the narrowing and the notes are new.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner import service
from planner.config import Settings
from planner.errors import PlannerError
from planner.run.preview import build_view

if TYPE_CHECKING:
    from planner.bundle.model import Bundle
    from planner.store.provenance import ProvenanceRecord
    from planner.tccm.model import TCCM


def narrowed(tccm: TCCM, max_tokens: int | None) -> TCCM:
    """`tccm` with max_tokens lowered to `max_tokens` (never raised). The sha256 changes with it, so a hot
    view of the full-budget bundle is never served for the narrowed one."""
    if max_tokens is None or max_tokens >= tccm.budget.max_tokens:
        return tccm
    if max_tokens <= 0:
        raise PlannerError(f"budget_tokens must be positive (got {max_tokens})")
    budget = tccm.budget.model_copy(update={"max_tokens": max_tokens,
                                            "per_file_max_tokens": min(tccm.budget.per_file_max_tokens, max_tokens)})
    sha = hashlib.sha256(f"{tccm.sha256}:max_tokens={max_tokens}".encode()).hexdigest()
    return tccm.model_copy(update={"budget": budget, "sha256": sha})


def ensure_repocontext(settings: Settings, root: Path) -> dict[str, Any]:
    """Gather `root` first, as a dispatch does, when its RepoContext is missing, stale (HEAD moved), dirty, or
    was gathered with another advisory source than the server's (its vulnerabilities would answer for other
    advisories); then an agent's bundle holds the repository as it is. Returns `gathered` (whether it did),
    `was` (the freshness it found) and `advisories` (the server's source, as a run states it)."""
    from planner.advisories.source import describe
    from planner.bundle.view import open_view
    from repocontext.store import RepoContextStore, StoreError

    advisories = os.pathsep.join(str(p) for p in settings.advisories) or None
    store = RepoContextStore(settings.home)
    try:
        view = open_view(root, store) if store.latest_path(root) else None
        was: str = view.freshness() if view is not None else "none"
        if was == "fresh" and service.sources_changed(view.context if view else None, root, advisories):
            was = "other-advisories"
    except StoreError:
        was = "none"  # an unreadable snapshot is re-made like a missing one
    gathered = was != "fresh"
    if gathered:
        # hot views are warmed only where they outlive this process (a Redis server), as a dispatch does
        service.gather_repo(settings, root, warm=settings.redis_url is not None)
    return {"gathered": gathered, "was": was, "advisories": describe(advisories).model_dump(mode="json")}


def agent_bundle(settings: Settings, name: str, repo: Path, inputs: Mapping[str, str],
                 budget_tokens: int | None = None) -> tuple[Bundle, ProvenanceRecord, list[str] | None]:
    """Build and record the bundle `planner bundle` would, within `budget_tokens` when that is lower; over
    budget for want of an input that scopes work items (no package), the per-item overview it prints too."""
    tccm = service.task_class(settings, name)
    bundle, _tccm, record, overview = build_view(settings, name, repo, inputs,
                                                         tccm=narrowed(tccm, budget_tokens))
    record.tccm.sha256 = tccm.sha256  # the file's hash: the narrowing shows in totals.max_tokens
    service.record(settings, record)
    return bundle, record, overview


def request_entry(settings: Settings, bundle_id: str, wanted: str, by: str = "mcp") -> dict[str, Any]:
    """Load one may_read (or deferred) entry of a recorded bundle, within what is left of its budget, and
    note the request in that bundle's provenance. Earlier requests count against the budget."""
    from planner.bundle.request import request
    from planner.bundle.view import open_view
    from planner.store.provenance import ProvenanceStore
    from repocontext.store import RepoContextStore

    store = ProvenanceStore(settings.home)
    record = store.get(bundle_id)
    tccm = narrowed(service.task_class(settings, record.task_class), record.totals.max_tokens)
    root = service.repo_root(Path(record.repocontext.repo))
    view = open_view(root, RepoContextStore(settings.home))
    updated, outcome = request(_as_bundle(record), tccm, view, wanted, by)
    text = ""
    if outcome["outcome"] == "loaded":
        entry = updated.entry(outcome["entry"])
        text = updated.text
        if entry is not None and entry.kind == "file":
            text = updated.files.get(entry.target, text)
    store.note(record.id, "request", outcome)
    return {"bundle_id": record.id, **outcome, "text": text}


def _as_bundle(record: ProvenanceRecord) -> Bundle:
    """The recorded bundle without its text (a request only appends). The record as read has the earlier
    loaded requests applied (ProvenanceStore.get), so they count against the budget."""
    from planner.bundle.model import Bundle

    return Bundle(task_class=record.task_class, tccm_version=record.tccm.version, mode=record.mode,
                  inputs=record.inputs, entries=record.entries, totals=record.totals, text="",
                  sha256=record.bundle_sha256)


def record_decision(settings: Settings, run_id: str, decision_type: str, decision: str, rationale: str,
                    affected_nodes: list[str]) -> dict[str, Any]:
    """Append a decision to a run's (or bundle build's) provenance notes."""
    from planner.store.provenance import ProvenanceStore

    if not decision_type.strip() or not decision.strip():
        raise PlannerError("a decision needs a decision_type and a decision")
    full = resolve_id(settings, run_id)
    line = ProvenanceStore(settings.home).note(full, "decision", {
        "decision_type": decision_type.strip(), "decision": decision, "rationale": rationale,
        "affected_nodes": list(affected_nodes)})
    return {"run_id": full, **line}


def resolve_id(settings: Settings, run_id: str) -> str:
    """The full id of a dispatched run or a recorded bundle build (a unique prefix is enough)."""
    from planner.store.provenance import ProvenanceStore
    from planner.store.runs import RunStore

    runs = RunStore(settings.home)
    try:
        return str(runs.get(run_id)["id"])
    except PlannerError:
        return ProvenanceStore(settings.home).get(run_id).id  # its message names the id when neither knows it
    finally:
        runs.close()


def search(settings: Settings, query: str, task_class: str | None = None, limit: int = 10) -> list[dict[str, Any]]:
    """Solved examples and recorded decisions matching `query`, best first, each with its run id."""
    from planner.store.examples import SolvedExamples, cosine, terms
    from planner.store.provenance import ProvenanceStore

    if limit <= 0:
        raise PlannerError(f"limit must be positive (got {limit})")
    if task_class is not None:
        service.task_class(settings, task_class)  # an unknown class is an error, not an empty answer
    found: list[dict[str, Any]] = []
    if (settings.home / "examples.sqlite").exists():
        examples = SolvedExamples(settings.home / "examples.sqlite")
        try:
            found += examples.find(query, task_class, limit)
        finally:
            examples.close()
    wanted = terms(query)
    classes = _record_classes(settings)
    for note in ProvenanceStore(settings.home).all_decisions():
        if task_class is not None and classes.get(note["run_id"]) != task_class:
            continue
        text = " ".join(str(note.get(k, "")) for k in ("decision_type", "decision", "rationale"))
        text += " " + " ".join(note.get("affected_nodes") or [])
        score = round(cosine(wanted, terms(text)), 4)
        if score > 0:
            found.append({"kind": "decision", "task_class": classes.get(note["run_id"]), "score": score,
                          **{k: v for k, v in note.items() if k != "note"}})
    found.sort(key=lambda hit: (-hit["score"], str(hit["run_id"])))
    return found[:limit]


def _record_classes(settings: Settings) -> dict[str, str]:
    from planner.store.provenance import ProvenanceStore
    from planner.store.runs import RunStore

    classes = {row["id"]: row["task_class"] for row in ProvenanceStore(settings.home).list()}
    runs = RunStore(settings.home)
    try:
        classes.update({row["id"]: row["task_class"] for row in runs.summaries()})
    finally:
        runs.close()
    return classes
