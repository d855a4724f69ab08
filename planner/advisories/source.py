"""What a run was checked against, stated in its report, JSON, portfolio row and UI page: an evaluation is a
claim about what was read, so a run that read no advisory (or could not read a lockfile) never reads as
"nothing found"."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from repocontext import osvsnapshot

SYNC_HINT = ("run `planner advisories sync` (osv.dev's exports, kept under PLANNER_HOME) or give --advisories PATH "
             "(or PLANNER_ADVISORIES)")


class AdvisorySource(BaseModel):
    kind: Literal["none", "paths", "snapshot"]
    paths: list[str] = Field(default_factory=list)
    synced_at: str | None = None  # a snapshot's: when its oldest ecosystem was synced
    url: str | None = None  # a snapshot's: the bucket it came from
    records: dict[str, int] = Field(default_factory=dict)  # advisories per ecosystem
    warning: str | None = None  # a snapshot older than PLANNER_ADVISORIES_MAX_AGE_DAYS

    def line(self) -> str:
        """One line: where the advisories came from, how old, how many per ecosystem."""
        counts = ", ".join(f"{name} {n:,}" for name, n in self.records.items()) or "no records"
        if self.kind == "none":
            return "none given"
        if self.kind == "snapshot":
            return f"synced snapshot of {self.synced_at} from {self.url or '?'} ({counts})"
        return f"{os.pathsep.join(self.paths)} ({counts})"


class Coverage(BaseModel):
    """What a run read: its advisory source, the manifests and lockfiles it could not evaluate, and why the
    run is `not_evaluated` when it found nothing (None when what it found nothing in was all read)."""

    advisories: AdvisorySource
    not_evaluated: list[str] = Field(default_factory=list)  # "not evaluated: FILE (ECOSYSTEM not supported)"
    reason: str | None = None


def describe(joined: str | None) -> AdvisorySource:
    """The advisory source a run's `advisories` option names (os.pathsep-joined paths; None: none)."""
    paths = [Path(p.strip()).expanduser() for p in (joined or "").split(os.pathsep) if p.strip()]
    if not paths:
        return AdvisorySource(kind="none")
    snapshot = osvsnapshot.snapshot_of(paths)
    if snapshot is not None:
        return AdvisorySource(kind="snapshot", paths=[str(p) for p in snapshot.files()],
                              synced_at=snapshot.synced_at(), url=snapshot.source, records=snapshot.records(),
                              warning=osvsnapshot.staleness(snapshot))
    return AdvisorySource(kind="paths", paths=[str(p) for p in paths], records=_records(joined or ""))


def _records(joined: str) -> dict[str, int]:
    """Advisories per ecosystem in the sources, from their compiled index (the gather built it)."""
    from repocontext.osv.index import open_db

    counts = open_db(joined).ecosystems()
    return {osvsnapshot.canonical(name): n for name, n in counts.items()}
