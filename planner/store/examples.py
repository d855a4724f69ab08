"""Solved examples: successful runs kept in SQLite and retrieved by similarity.

Candidates come from SQLite's FTS5 index (BM25 ranking); the score that is
compared with the threshold is the cosine similarity of term-frequency
vectors, which is bounded (0..1) and so makes a threshold meaningful.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from planner.patch.plan import Plan
from planner.store.sqlite import open_db
from repocontext.secrets import redact, redact_tree

DEFAULT_THRESHOLD = 0.85
_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:[.-][A-Za-z0-9_]+)*")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS examples (
    id INTEGER PRIMARY KEY, task_class TEXT NOT NULL, fingerprint TEXT NOT NULL,
    plan TEXT NOT NULL, patch TEXT NOT NULL, run_id TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS examples_fts USING fts5(fingerprint, content='examples', content_rowid='id');
"""


class Example(BaseModel):
    run_id: str
    score: float
    plan: Plan
    patch: str


def terms(text: str) -> Counter[str]:
    return Counter(t.lower() for t in _TOKEN.findall(text))


def cosine(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(count * b.get(term, 0) for term, count in a.items())
    norm = math.sqrt(sum(c * c for c in a.values())) * math.sqrt(sum(c * c for c in b.values()))
    return dot / norm if norm else 0.0


def _digest(plan: Plan) -> dict[str, object]:
    """What a search hit shows of a plan: what it did and where, not the edits' text."""
    return {"summary": plan.summary, "files": sorted({e.file for e in plan.edits})}


class SolvedExamples:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = open_db(path, _SCHEMA, f"the solved-example store {path}", timeout=5)  # sqlite3's default

    def close(self) -> None:
        self.db.close()

    def add(self, task_class: str, fingerprint: str, plan: Plan, patch: str, run_id: str) -> None:
        known = self.db.execute("SELECT 1 FROM examples WHERE run_id = ? AND fingerprint = ?", (run_id, fingerprint))
        if known.fetchone():
            return  # a resumed run finalising twice files its example once
        # Redacted field by field, before encoding: JSON would turn a line break into "\n" that a
        # line-anchored rule no longer sees.
        shown = Plan.model_validate(redact_tree(plan.model_dump())).model_dump_json()
        with self.db:
            cursor = self.db.execute(
                "INSERT INTO examples (task_class, fingerprint, plan, patch, run_id, created_at) VALUES (?,?,?,?,?,?)",
                (task_class, redact(fingerprint), shown, redact(patch), run_id,
                 datetime.now(UTC).isoformat(timespec="seconds")))
            self.db.execute("INSERT INTO examples_fts (rowid, fingerprint) VALUES (?, ?)",
                            (cursor.lastrowid, redact(fingerprint)))

    def search(self, task_class: str, fingerprint: str, threshold: float = DEFAULT_THRESHOLD,
               limit: int = 5) -> list[Example]:
        """Examples of this task class at least `threshold` similar, best first."""
        wanted = terms(fingerprint)
        if not wanted:
            return []
        query = " OR ".join(f'"{t}"' for t, _ in wanted.most_common(48))
        rows = self.db.execute(
            "SELECT e.run_id, e.fingerprint, e.plan, e.patch FROM examples_fts f JOIN examples e ON e.id = f.rowid "
            "WHERE examples_fts MATCH ? AND e.task_class = ? ORDER BY bm25(examples_fts) LIMIT 20",
            (query, task_class)).fetchall()
        found = []
        for run_id, text, plan, patch in rows:
            score = round(cosine(wanted, terms(text)), 4)
            if score >= threshold:
                found.append(Example(run_id=run_id, score=score, plan=Plan.model_validate_json(plan), patch=patch))
        found.sort(key=lambda e: (-e.score, e.run_id))
        return found[:limit]

    def find(self, query: str, task_class: str | None = None, limit: int = 10) -> list[dict[str, object]]:
        """Examples whose fingerprint shares a term with `query` (any task class unless one is named), best
        first by cosine similarity: a search for people and agents, so no threshold."""
        wanted = terms(query)
        if not wanted:
            return []
        match = " OR ".join(f'"{t}"' for t in wanted)
        rows = self.db.execute(
            "SELECT e.run_id, e.task_class, e.fingerprint, e.plan, e.created_at FROM examples_fts f "
            "JOIN examples e ON e.id = f.rowid WHERE examples_fts MATCH ? AND (? IS NULL OR e.task_class = ?) "
            "ORDER BY bm25(examples_fts) LIMIT ?", (match, task_class, task_class, max(limit * 4, 20))).fetchall()
        found = [{"kind": "solved_example", "run_id": run_id, "task_class": tc, "created_at": created,
                  "score": round(cosine(wanted, terms(text)), 4), **_digest(Plan.model_validate_json(plan))}
                 for run_id, tc, text, plan, created in rows]
        found.sort(key=lambda e: (-float(e["score"]), str(e["run_id"])))
        return found[:limit]

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM examples").fetchone()[0])
