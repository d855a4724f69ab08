"""The synced OSV snapshot under PLANNER_HOME/advisories/ (written by `planner advisories sync`).

    advisories/manifest.json                 which zips are current, when each was synced, its record count
    advisories/<ECOSYSTEM>/<sha256:16>.zip   osv.dev's `<ECOSYSTEM>/all.zip`, verified, named by its content
                                             (or the previous zip with the records changed since replaced)

Only the manifest says which zips are current, and it is replaced in one rename after the new zips are in
place: a reader sees the old snapshot or the new one, never half of one.

Standard library only, and no `repocontext.osv` import: `Settings.from_env` reads the manifest in every
process (the snapshot is the default advisory source when none is given), so this must cost a file read.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

FOLDER = "advisories"
MANIFEST = "manifest.json"
FORMAT = 1
MAX_AGE_ENV = "PLANNER_ADVISORIES_MAX_AGE_DAYS"
MAX_AGE_DAYS = 7.0
# osv.dev's ecosystem names as its bucket spells them; what a user types is matched case-insensitively.
KNOWN_ECOSYSTEMS = ("PyPI", "npm", "Go", "crates.io", "RubyGems", "Packagist", "Maven", "NuGet", "Hex", "Pub",
                    "SwiftURL", "Hackage", "CRAN", "GitHub Actions")


class Snapshot(NamedTuple):
    """A synced snapshot as its manifest records it."""

    folder: Path
    source: str  # the bucket URL it came from
    # name -> {"file", "records", "synced_at", "sha256", "bytes", "modified" (its newest record's: where an
    # incremental sync starts), "update" ("full" or "incremental"), "changed" (records an incremental one fetched)}
    ecosystems: dict[str, dict[str, Any]]

    def files(self) -> tuple[Path, ...]:
        return tuple(self.folder / str(entry["file"]) for _, entry in sorted(self.ecosystems.items()))

    def synced_at(self) -> str | None:
        """When its oldest ecosystem was synced: the age of what a run was checked against."""
        times = [str(e["synced_at"]) for e in self.ecosystems.values() if e.get("synced_at")]
        return min(times) if times else None

    def records(self) -> dict[str, int]:
        return {name: int(entry.get("records") or 0) for name, entry in sorted(self.ecosystems.items())}


def folder(home: Path) -> Path:
    return home / FOLDER


def canonical(ecosystem: str) -> str:
    """osv.dev's spelling of an ecosystem name (`pypi` → `PyPI`); an unknown name is kept as given."""
    wanted = ecosystem.strip().casefold()
    return next((name for name in KNOWN_ECOSYSTEMS if name.casefold() == wanted), ecosystem.strip())


def read(home: Path) -> Snapshot | None:
    """The snapshot under `home`, or None when there is none (or its manifest is unreadable: then no source
    is given, and a run says so rather than reading half a snapshot)."""
    return read_folder(folder(home))


def read_folder(where: Path) -> Snapshot | None:
    try:
        data = json.loads((where / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("ecosystems"), dict):
        return None
    entries = {str(k): v for k, v in data["ecosystems"].items() if isinstance(v, dict) and v.get("file")}
    return Snapshot(folder=where, source=str(data.get("source") or ""), ecosystems=entries)


def sources(home: Path) -> tuple[Path, ...]:
    """The snapshot's zips, when one was synced: the advisory source of every command given none."""
    snapshot = read(home)
    return snapshot.files() if snapshot is not None else ()


def snapshot_of(paths: list[Path]) -> Snapshot | None:
    """The snapshot these sources are exactly the files of (however they were named: the default, or
    PLANNER_ADVISORIES spelling them out), else None."""
    if not paths:
        return None
    where = paths[0].expanduser().resolve().parent.parent
    snapshot = read_folder(where)
    if snapshot is None:
        return None
    wanted = {p.resolve() for p in snapshot.files()}
    return snapshot if {p.expanduser().resolve() for p in paths} == wanted else None


def max_age_days() -> float:
    """PLANNER_ADVISORIES_MAX_AGE_DAYS when it is a positive number, else 7."""
    try:
        value = float(os.environ.get(MAX_AGE_ENV, ""))
    except ValueError:
        return MAX_AGE_DAYS
    return value if value > 0 else MAX_AGE_DAYS


def age_days(synced_at: str | None, now: datetime | None = None) -> float | None:
    if not synced_at:
        return None
    try:
        when = datetime.fromisoformat(synced_at)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return ((now or datetime.now(UTC)) - when).total_seconds() / 86400


def staleness(snapshot: Snapshot, now: datetime | None = None) -> str | None:
    """A warning when the snapshot is older than PLANNER_ADVISORIES_MAX_AGE_DAYS, else None."""
    age, limit = age_days(snapshot.synced_at(), now), max_age_days()
    if age is None or age <= limit:
        return None
    return (f"the advisory snapshot is {age:.0f} days old (synced {snapshot.synced_at()}; over "
            f"{MAX_AGE_ENV}={limit:g}): advisories published since are not checked; run `planner advisories sync`")
