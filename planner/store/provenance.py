"""Provenance: one append-only record per bundle build or run.

Records live in `$PLANNER_HOME/runs/<id>.json`, written once and never
rewritten; `index.jsonl` gets one line per record for fast listing, and the
runs list's table in runs.sqlite its row (planner/store/runindex.py). Everything
in a record except `id` and `created_at` is a pure function of the repo state,
the TCCM and the inputs, so two builds of the same thing compare equal.
"""

from __future__ import annotations

import fcntl
import json
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.bundle.model import Bundle, BundleEntry, Totals
from planner.bundle.view import RepoView
from planner.errors import EnvironmentProblem, PlannerError
from planner.store.runs import RunStore
from planner.tccm.model import TCCM
from repocontext.store import atomic_write

VOLATILE = ("id", "created_at")


class TCCMRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    task_class: str
    path: str
    version: str
    sha256: str
    chain: list[str] = Field(default_factory=list)


class RepoContextRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    repo: str  # the repository root
    repo_id: str | None = None
    commit: str | None = None
    gathered_at: str | None = None
    freshness: Literal["fresh", "stale", "dirty", "none"]
    dirty: bool | None = None


class StageRecord(BaseModel):
    model_config = ConfigDict(extra="allow")
    stage: str
    outcome: str
    reason: str = ""


class ProvenanceRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    kind: Literal["bundle", "run"] = "bundle"
    created_at: str
    task_class: str
    status: str = "built"
    tccm: TCCMRef
    repocontext: RepoContextRef
    mode: Literal["repocontext", "bootstrap"]
    inputs: dict[str, str]
    entries: list[BundleEntry]
    totals: Totals
    bundle_sha256: str
    hot_views: str | None = None  # what the hot views did: "hit: bundle", slice hits, "unavailable (why)", "off"
    # how the programs a run started were contained: "bwrap", or "none (--no-sandbox)"; None for a bundle
    sandbox: str | None = None
    stages: list[StageRecord] = Field(default_factory=list)
    requests: list[dict[str, Any]] = Field(default_factory=list)
    llm_calls: list[dict[str, Any]] = Field(default_factory=list)
    item_bundles: list[dict[str, Any]] = Field(default_factory=list)  # bundles rebuilt per work item
    decisions: list[dict[str, Any]] = Field(default_factory=list)  # recorded later by agents (record notes)

    def stable_dict(self, hot_views: bool = True) -> dict[str, Any]:
        """The record without its volatile fields: equal for equal builds. With hot_views=False, also
        without what only hot views change (`hot_views`, and `source: hot_view` mapped back to its origin)."""
        # decisions are added after the build, by agents: not part of what the build produced
        data = self.model_dump(mode="json", exclude={*VOLATILE, "decisions"})
        if data.get("sandbox") is None:  # a bundle build ran no program: its record is as it always was
            data.pop("sandbox", None)
        if not hot_views:
            data.pop("hot_views", None)
            for item in data["item_bundles"]:
                item.pop("hot_views", None)
            for entry in data["entries"]:
                if entry["source"] == "hot_view":
                    entry["source"] = "repocontext" if entry["kind"] == "key" else "filesystem"
        return data


def new_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def record_for(bundle: Bundle, tccm: TCCM, view: RepoView, kind: Literal["bundle", "run"] = "bundle",
               run_id: str | None = None, hot_views: str | None = None) -> ProvenanceRecord:
    meta = (view.context or {}).get("meta", {})
    return ProvenanceRecord(
        id=run_id or new_id(), kind=kind, created_at=datetime.now(UTC).isoformat(timespec="microseconds"),
        task_class=tccm.task_class,
        tccm=TCCMRef(task_class=tccm.task_class, path=tccm.path, version=tccm.version, sha256=tccm.sha256,
                     chain=list(tccm.chain)),
        repocontext=RepoContextRef(repo=str(view.root), repo_id=meta.get("repo_id"), commit=meta.get("commit"),
                                   gathered_at=meta.get("gathered_at"), freshness=view.freshness(),
                                   dirty=meta.get("dirty")),
        mode=bundle.mode, inputs=dict(sorted(bundle.inputs.items())), entries=bundle.entries, totals=bundle.totals,
        bundle_sha256=bundle.sha256, hot_views=hot_views,
    )


def index_summary(record: ProvenanceRecord) -> dict[str, Any]:
    """The record's line in index.jsonl: enough for a runs list (`planner ui`) without opening the record."""
    costs = [c.get("cost_usd") for c in record.llm_calls]
    priced = [c for c in costs if c is not None]
    items = {b.get("item") for b in record.item_bundles} | {getattr(s, "item", None) for s in record.stages}
    return {"id": record.id, "kind": record.kind, "created_at": record.created_at,
            "task_class": record.task_class, "status": record.status, "repo": record.repocontext.repo,
            "mode": record.mode, "tokens": record.totals.tokens, "max_tokens": record.totals.max_tokens,
            "commit": record.repocontext.commit, "items": len(items - {None}), "llm_calls": len(costs),
            # unknown when any call had no price: a partial sum would read as the whole cost
            "cost_usd": None if len(priced) < len(costs) else round(sum(priced), 6)}


def _mark_requested(record: ProvenanceRecord, request: dict[str, Any]) -> None:
    """An entry an agent had loaded after the build reads as `requested`, its tokens in the totals, as the
    entries a run requested do in the run's own record."""
    entry = next((e for e in record.entries if e.id == request.get("entry")), None)
    if entry is None or entry.status not in ("listed", "deferred"):
        return
    totals, was = record.totals, entry.status
    entry.status, entry.tokens, entry.tokens_needed = "requested", int(request.get("tokens") or 0), None
    entry.detail = f"requested by {request.get('by')}"
    totals.tokens += entry.tokens
    totals.files += entry.kind == "file"
    totals.by_status[was] = totals.by_status.get(was, 1) - 1
    totals.by_status["requested"] = totals.by_status.get("requested", 0) + 1


class ProvenanceStore:
    def __init__(self, home: Path) -> None:
        self.home, self.dir = home, home / "runs"

    def append(self, record: ProvenanceRecord, runs: RunStore | None = None) -> Path:
        """Write the record, its index.jsonl line, then its row of the runs list's table (through `runs`, the
        caller's open run store, or one opened here)."""
        path = self.dir / f"{record.id}.json"
        if path.exists():
            raise PlannerError(f"provenance record {record.id} already exists; records are append-only")
        summary = index_summary(record)
        try:
            atomic_write(path, record.model_dump_json(indent=2) + "\n")
            with (self.dir / "index.jsonl").open("a", encoding="utf-8") as index:
                fcntl.flock(index, fcntl.LOCK_EX)
                index.write(json.dumps(summary, sort_keys=True) + "\n")  # one write: survives kill -9 whole
        except OSError as exc:
            raise EnvironmentProblem(f"cannot write provenance under {self.dir}: {exc.strerror}") from exc
        self._summarize(summary, runs)
        return path

    def _summarize(self, summary: dict[str, Any], runs: RunStore | None) -> None:
        store = runs or RunStore(self.home)
        try:
            store.summarize(summary)
        finally:
            if runs is None:
                store.close()

    def exists(self, record_id: str) -> bool:
        return (self.dir / f"{record_id}.json").is_file()

    def get(self, record_id: str) -> ProvenanceRecord:
        path = self.dir / f"{record_id}.json"
        if not path.is_file():
            matches = sorted(self.dir.glob(f"{record_id}*.json")) if record_id and "/" not in record_id else []
            if len(matches) != 1:
                why = "is ambiguous" if matches else "does not exist"
                raise PlannerError(f"provenance record {record_id!r} {why} (see `planner runs list`)")
            path = matches[0]
        try:
            record = ProvenanceRecord.model_validate_json(path.read_bytes())
        except (OSError, ValidationError) as exc:
            raise PlannerError(f"provenance record {path} is unreadable: {exc.__class__.__name__}") from exc
        notes = self.notes(record.id)
        for request in (n for n in notes if n.get("note") == "request"):
            record.requests.append(request)
            if request.get("outcome") == "loaded":
                _mark_requested(record, request)
        record.decisions += [n for n in notes if n.get("note") == "decision"]
        return record

    # Notes: what agents add to a record after it was written (may_read requests through `planner mcp`,
    # workflow decisions). The record file stays write-once; notes go to `<id>.notes.jsonl` beside it, one
    # line each, and `get` merges them, so `planner provenance` and the UI show them with the record.
    def note(self, record_id: str, kind: Literal["request", "decision"], data: dict[str, Any]) -> dict[str, Any]:
        line = {"note": kind, "at": datetime.now(UTC).isoformat(timespec="microseconds"), **data}
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            with (self.dir / f"{record_id}.notes.jsonl").open("a", encoding="utf-8") as notes:
                fcntl.flock(notes, fcntl.LOCK_EX)
                notes.write(json.dumps(line, sort_keys=True) + "\n")  # one write: a line survives kill -9 whole
        except OSError as exc:
            raise EnvironmentProblem(f"cannot write provenance under {self.dir}: {exc.strerror}") from exc
        return line

    def notes(self, record_id: str) -> list[dict[str, Any]]:
        try:
            lines = (self.dir / f"{record_id}.notes.jsonl").read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        found = []
        for line in lines:
            try:
                found.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                continue  # a torn last line after a crash
        return found

    def all_decisions(self) -> list[dict[str, Any]]:
        """Every recorded decision, with the id of the run or bundle build it belongs to."""
        found = []
        for path in sorted(self.dir.glob("*.notes.jsonl")):
            record_id = path.name.removesuffix(".notes.jsonl")
            found += [{"run_id": record_id, **n} for n in self.notes(record_id) if n.get("note") == "decision"]
        return found

    def list(self) -> list[dict[str, Any]]:
        try:
            lines = (self.dir / "index.jsonl").read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        rows = []
        for line in lines:
            try:
                rows.append(orjson.loads(line))  # a few times faster than json: 10,000 runs list in ~15 ms
            except orjson.JSONDecodeError:
                continue  # a torn last line after a crash: the record file itself is intact
        return rows
