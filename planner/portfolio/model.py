"""What travels between the coordinator and the workers, and what the coordinator records."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, Field

OK_STATUSES = ("succeeded", "no_changes", "not_applicable")
Engine = Literal["local", "celery"]


def run_key(portfolio_id: str, repo: str, commit: str | None, tccm_sha256: str, inputs: dict[str, str],
            advisories: list[str]) -> str:
    """The idempotency key of one run: the same portfolio, repo state, TCCM and inputs is one run."""
    material = json.dumps([portfolio_id, repo, commit, tccm_sha256, inputs, advisories], sort_keys=True)
    return hashlib.sha256(material.encode()).hexdigest()[:32]


class Spec(BaseModel):
    """A portfolio as dispatched: what to run, where, and how."""

    id: str
    task_class: str
    tccm_sha256: str
    inputs: dict[str, str] = Field(default_factory=dict)
    advisories: list[str] = Field(default_factory=list)
    apply: bool = False
    engine: Engine = "local"
    workers: int = 2
    repos_source: str = ""


class Job(BaseModel):
    """One repository's run, as handed to a worker (JSON over the broker)."""

    portfolio_id: str
    repo: str
    task_class: str
    inputs: dict[str, str] = Field(default_factory=dict)
    advisories: list[str] = Field(default_factory=list)
    commit: str | None = None
    key: str


class Shipped(BaseModel):
    """A run made in a worker's own PLANNER_HOME, shipped back so the coordinator shows it like a local run."""

    row: dict[str, Any]
    artifacts: dict[str, str] = Field(default_factory=dict)  # file name → text, under runs/<id>/
    provenance: str | None = None  # the provenance record JSON
    examples: list[dict[str, Any]] = Field(default_factory=list)  # solved examples this run added


class Result(BaseModel):
    """One repository's outcome."""

    repo: str
    key: str
    status: str
    exit_code: int = 0
    run_id: str | None = None
    commit: str | None = None
    error: str | None = None
    findings: int = 0
    items: int = 0
    versions: dict[str, str] = Field(default_factory=dict)  # package → version chosen
    advisories: str | None = None  # the run's advisory source in one line, for a class that reads advisories
    items_detail: list[dict[str, Any]] = Field(default_factory=list)  # per item: status, columns, reason
    patch: str = ""
    report: str = ""
    branch: str | None = None
    apply_error: str | None = None
    worker: str | None = None
    seconds: float = 0.0
    shipped: Shipped | None = None

    @property
    def ok(self) -> bool:
        return self.status in OK_STATUSES


class Entry(BaseModel):
    """One repository of a portfolio as the coordinator's store holds it."""

    repo: str
    position: int
    key: str
    commit: str | None = None
    status: str = "pending"
    task_id: str | None = None
    attempts: int = 0
    result: Result | None = None
