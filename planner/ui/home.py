"""Read-only access to PLANNER_HOME for the web UI: runs, provenance records and run artifacts.

Nothing here creates or writes a file. Every path is built from a validated
id and checked to stay inside PLANNER_HOME after symlinks are resolved, so no
request can read elsewhere.
"""

from __future__ import annotations

import json
import re
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from planner.errors import PlannerError
from planner.store.provenance import ProvenanceRecord, ProvenanceStore, index_summary
from planner.store.runs import RunStore, read_state

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$")  # run ids are like 20261121-202631-f1699d
SUMMARY_KEYS = ("commit", "items", "llm_calls", "cost_usd")
_RECORDS_KEPT = 16


class NotFound(PlannerError):
    """An unknown run id (a 404 page, never a traceback)."""


class RunRow(BaseModel):
    """One line of the runs page."""

    id: str
    kind: str
    task_class: str
    status: str
    repo: str
    created_at: str
    commit: str | None = None
    items: int | None = None
    tokens: int | None = None
    max_tokens: int | None = None
    llm_calls: int | None = None
    cost_usd: float | None = None
    duration_s: float | None = None


def inside(home: Path, path: Path) -> bool:
    """True when `path` (symlinks resolved) lies under PLANNER_HOME."""
    try:
        path.resolve().relative_to(home.resolve())
    except (ValueError, OSError):
        return False
    return True


def check_id(run_id: str) -> str:
    if not _ID.match(run_id):
        raise NotFound(f"no run or bundle build {run_id!r} under PLANNER_HOME (ids are letters, digits, - and _)")
    return run_id


class Home:
    """PLANNER_HOME, read-only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # parsed records by id, with the (mtime, size) they were read at: records are append-only, and a run
        # page (and its polling, /api and compare) would otherwise re-validate thousands of entries each time
        self._records: dict[str, tuple[tuple[int, int], ProvenanceRecord]] = {}
        self._lock = threading.Lock()  # routes run on a thread pool

    def run_row(self, data: dict[str, Any]) -> RunRow:
        """The runs page line from the runs list's SQL row; a row whose index line predates the summary
        columns (`complete` = 0) takes them from the run's record."""
        if not data.pop("complete", 1) and (found := self._summary(data["id"])):
            data.update({k: data.get(k) if data.get(k) is not None else v for k, v in found.items()})
        return RunRow(**data)

    def _summary(self, run_id: str) -> dict[str, Any] | None:
        path = self.path / "runs" / f"{run_id}.json"
        if not _ID.match(run_id) or not path.is_file() or not inside(self.path, path):
            return None
        return _cached_summary(path, path.stat().st_mtime_ns)

    def record(self, run_id: str) -> ProvenanceRecord | None:
        """The run's provenance record, or None when it has none (yet)."""
        full = self._full_id(run_id)
        path = self.path / "runs" / f"{full}.json"
        if not path.is_file():
            return None
        if not inside(self.path, path):
            raise NotFound(f"run {run_id!r}: its record points outside PLANNER_HOME; not shown")
        st = path.stat()
        cached = self._records.get(full)
        if cached is not None and cached[0] == (st.st_mtime_ns, st.st_size):
            return cached[1]
        record = ProvenanceStore(self.path).get(full)
        with self._lock:
            if len(self._records) >= _RECORDS_KEPT:
                self._records.pop(next(iter(self._records)))  # the oldest read
            self._records[full] = ((st.st_mtime_ns, st.st_size), record)
        return record

    def _full_id(self, run_id: str) -> str:
        """The unique run or record id `run_id` starts (like the CLI), or NotFound."""
        check_id(run_id)
        if (self.path / "runs" / f"{run_id}.json").is_file():
            return run_id  # an exact id with a record: no need to open the run store
        store = RunStore(self.path, readonly=True)
        try:
            ids = {r["id"] for r in store.matching(run_id)}
        finally:
            store.close()
        if run_id in ids:
            return run_id  # an exact id: no need to list the runs folder
        ids |= {p.name.removesuffix(".json") for p in (self.path / "runs").glob(f"{run_id}*.json")}
        if run_id in ids:
            return run_id
        if len(ids) != 1:
            why = "is ambiguous" if ids else "does not exist"
            raise NotFound(f"run {run_id!r} {why} under PLANNER_HOME {self.path}")
        return ids.pop()

    def run(self, run_id: str) -> dict[str, Any] | None:
        """The runs table row of a dispatched run (None for a bundle build)."""
        store = RunStore(self.path, readonly=True)
        try:
            return store.get(run_id)
        except PlannerError:
            return None
        finally:
            store.close()

    def state(self, run_id: str) -> dict[str, Any]:
        return read_state(self.path, check_id(run_id))

    def artifact(self, run_id: str, name: str) -> str | None:
        """A run artifact's text (report.md, patch.diff, ledger.json), None when absent or outside the home."""
        path = self.path / "runs" / check_id(run_id) / name
        if not path.is_file() or not inside(self.path, path):
            return None
        return path.read_text(encoding="utf-8", errors="replace")

    def prompts(self, run_id: str) -> list[str]:
        """The paths of the prompts a needs_llm run saved (what an LLM would have been sent), for answering by hand."""
        folder = self.path / "runs" / check_id(run_id)
        return sorted(str(p) for p in folder.glob("prompt-*.md") if inside(self.path, p)) if folder.is_dir() else []

    def resolve(self, run_id: str) -> str:
        return self._full_id(run_id)


@lru_cache(maxsize=4096)
def _cached_summary(path: Path, mtime_ns: int) -> dict[str, Any] | None:
    """Records are append-only, so (path, mtime) identifies their content."""
    try:
        record = ProvenanceRecord.model_validate_json(path.read_bytes())
    except (OSError, ValueError):
        return None
    return {k: v for k, v in index_summary(record).items() if k in SUMMARY_KEYS}


def ledger(text: str | None) -> list[dict[str, Any]]:
    try:
        data = json.loads(text or "[]")
    except ValueError:
        return []
    return data if isinstance(data, list) else []
