"""A RepoContext stored one section per file, read lazily.

A bundle build needs the file index plus the few sections its TCCM names;
parsing the whole snapshot (call sites of a large repository run to megabytes)
for every build would cost more than the build itself. `save` writes the
sections of one snapshot into a fresh directory and then points
`latest-sections` at it, so a reader never sees a mix of two gathers;
`LazyContext` is a read-only mapping that parses a section on first access.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from repocontext.parallel import gc_paused

POINTER = "latest-sections"


class StoreError(RuntimeError):
    """A stored snapshot that cannot be read or written; the message says what to do."""


def write(directory: Path, key: str, parts: Mapping[str, bytes], write_file: Any) -> None:
    """Write `parts` (section name → JSON bytes) as a new sections directory and point to it."""
    digest = hashlib.sha1(b"".join(parts.get(name, b"") for name in ("meta", "files"))).hexdigest()[:12]
    name = f"{key}.sections-{digest}"
    target = directory / name
    target.mkdir(parents=True, exist_ok=True)
    for section, data in parts.items():
        write_file(target / f"{section}.json", data)
    previous = current(directory)
    write_file(directory / POINTER, name + "\n")
    for old in directory.glob("*.sections-*"):
        if old.name not in (name, previous):  # keep the one a reader may still be using
            shutil.rmtree(old, ignore_errors=True)


def current(directory: Path) -> str | None:
    try:
        return (directory / POINTER).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


class LazyContext(Mapping[str, Any]):
    """A read-only RepoContext as plain JSON, one section parsed at a time."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        self._names = sorted(p.stem for p in directory.glob("*.json"))
        self._cache: dict[str, Any] = {}

    def __getitem__(self, section: str) -> Any:
        if section not in self._cache:
            if section not in self._names:
                raise KeyError(section)
            path = self._dir / f"{section}.json"
            try:
                with gc_paused():
                    self._cache[section] = orjson.loads(path.read_bytes())
            except (OSError, orjson.JSONDecodeError) as exc:
                raise StoreError(f"RepoContext section {path} is unreadable ({exc}); re-run `planner gather`") from exc
        return self._cache[section]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def open_latest(directory: Path, key: str) -> LazyContext | None:
    """The lazy view of snapshot `key`, when its sections were written (else None: use the full file)."""
    name = current(directory)
    if name is None or not name.startswith(f"{key}.sections-") or not (directory / name / "meta.json").is_file():
        return None
    return LazyContext(directory / name)
