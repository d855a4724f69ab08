"""Loading advisories from directories, osv.dev zip exports and scanner reports.

`load(sources)` accepts a path, several paths joined with `os.pathsep`, or a list.
Each path is detected by what it is:
- a directory: every `.json`/`.yaml`/`.yml` file below it (hidden folders skipped);
- a zip (osv.dev export layout, e.g. `PyPI/all.zip` holding `<ID>.json`): its JSON/YAML members;
- any other file: JSON (by suffix or a leading `{`/`[`) or YAML, holding an OSV record,
  a list of them, an osv-scanner report or a pip-audit report (see `reports`).
Nothing in a source aborts the load: unreadable files and malformed records become
`LoadIssue`s on the returned database.
"""

from __future__ import annotations

import gc
import hashlib
import os
import time
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import ValidationError

from repocontext import bounded
from repocontext.osv.db import AdvisoryDB
from repocontext.osv.reports import records_from_document
from repocontext.osv.schema import Advisory, LoadIssue
from repocontext.osv.yamlfast import load_yaml

SUFFIXES = (".json", ".yaml", ".yml")
MAX_MEMBER_BYTES = 64 * 1024 * 1024  # one advisory file or zip member; real ones are kilobytes
_LIMITS = bounded.Limits(max_bytes=MAX_MEMBER_BYTES)  # an osv-scanner report can be megabytes

SourceKind = Literal["directory", "zip", "file", "missing"]
Sources = str | Path | Iterable[str | Path]


def split_sources(sources: Sources) -> list[Path]:
    """The paths named by `sources` (a path, paths joined with os.pathsep, or a list), in order."""
    items = [sources] if isinstance(sources, (str, Path)) else list(sources)
    paths: list[Path] = []
    for item in items:
        parts = str(item).split(os.pathsep) if isinstance(item, str) else [str(item)]
        paths.extend(Path(p).expanduser() for p in parts if p.strip())
    return paths


def detect(path: Path) -> SourceKind:
    if path.is_dir():
        return "directory"
    if not path.is_file():
        return "missing"
    return "zip" if path.suffix.lower() == ".zip" or zipfile.is_zipfile(path) else "file"


def load(sources: Sources) -> AdvisoryDB:
    db = AdvisoryDB()
    with _gc_paused():
        for path in split_sources(sources):
            for label, advisory in _advisories(path, db.issues):
                db.add(advisory, label)
    return db


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Loading allocates hundreds of thousands of acyclic containers; cyclic GC passes over
    them cost ~20% of the load time and free nothing."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def advisories(path: Path, issues: list[LoadIssue]) -> Iterator[tuple[str, Advisory]]:
    """(label, advisory) for each record one source holds, read as `load` reads it but streamed (a sync
    verifies an export of 100,000 records without holding them); what is unusable goes to `issues`."""
    return _advisories(path, issues)


def _advisories(path: Path, issues: list[LoadIssue]) -> Iterator[tuple[str, Advisory]]:
    for label, data in _raw_files(path, issues):
        try:
            doc = _parse(label, data)
        except (ValueError, yaml.YAMLError, RecursionError) as exc:
            issues.append(LoadIssue(source=label, reason=f"cannot parse: {_first_line(exc)}"))
            continue
        records, found = records_from_document(doc, label)
        issues.extend(found)
        for record in records:
            advisory = _validate(record, label, issues)
            if advisory is not None:
                yield label, advisory


def _raw_files(path: Path, issues: list[LoadIssue]) -> Iterator[tuple[str, bytes]]:
    """(label, bytes) of every advisory file a source holds, in a stable order."""
    kind = detect(path)
    try:
        if kind == "directory":
            for file in advisory_files(path):
                data = _read(file, issues)
                if data is not None:
                    yield str(file), data
        elif kind == "zip":
            yield from _zip_members(path, issues)
        elif kind == "file":
            yield str(path), path.read_bytes()
        else:
            issues.append(LoadIssue(source=str(path), reason="no such file or directory"))
    except (OSError, zipfile.BadZipFile) as exc:
        issues.append(LoadIssue(source=str(path), reason=f"cannot read: {exc}"))


def _read(file: Path, issues: list[LoadIssue]) -> bytes | None:
    try:
        return file.read_bytes()
    except OSError as exc:  # one unreadable file costs only itself
        issues.append(LoadIssue(source=str(file), reason=f"cannot read: {exc.strerror or exc}"))
        return None


def advisory_files(root: Path) -> list[Path]:
    """The advisory files below a directory, sorted; hidden folders and files are skipped."""
    return sorted(Path(entry.path) for entry in _advisory_entries(str(root)))


def _advisory_entries(root: str) -> Iterator[os.DirEntry[str]]:
    """The advisory files below `root`, one scandir per folder: hidden folders and files skipped, linked
    folders not entered (as os.walk does). What `load` reads and what `fingerprint` stats are both this."""
    folders = [root]
    while folders:
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    try:
                        if entry.is_dir():
                            if not entry.is_symlink():
                                folders.append(entry.path)
                        elif entry.name.lower().endswith(SUFFIXES):
                            yield entry
                    except OSError:
                        continue
        except OSError:
            continue


def _zip_members(path: Path, issues: list[LoadIssue]) -> Iterator[tuple[str, bytes]]:
    with zipfile.ZipFile(path) as archive:
        members = sorted(
            (m for m in archive.infolist() if not m.is_dir() and m.filename.lower().endswith(SUFFIXES)),
            key=lambda m: m.filename,
        )
        for member in members:
            label = f"{path}!{member.filename}"
            if member.file_size > MAX_MEMBER_BYTES:
                issues.append(LoadIssue(source=label, reason=f"member too large ({member.file_size} bytes)"))
                continue
            try:
                data = archive.read(member)
            except (OSError, zipfile.BadZipFile, zlib.error) as exc:  # a corrupt member costs only itself
                issues.append(LoadIssue(source=label, reason=f"cannot read: {exc}"))
                continue
            yield label, data


def _parse(label: str, data: bytes) -> Any:
    """The document; ValueError (bounded.LimitExceeded among them) or yaml.YAMLError when it is unusable."""
    name = label.rsplit("!", 1)[-1].lower()
    if name.endswith(".json") or (not name.endswith((".yaml", ".yml")) and data.lstrip()[:1] in (b"{", b"[")):
        return bounded.json_loads(data, _LIMITS)
    return load_yaml(data, _LIMITS)


def _validate(record: dict[str, Any], label: str, issues: list[LoadIssue]) -> Advisory | None:
    try:
        return Advisory.model_validate(record)
    except ValidationError as exc:
        ident = record.get("id") if isinstance(record.get("id"), str) else "record"
        issues.append(LoadIssue(source=label, reason=f"malformed {ident}: {_validation_summary(exc)}"))
        return None


def _validation_summary(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str(p) for p in first["loc"]) or "record"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}"


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else exc.__class__.__name__


_held: dict[str, float] = {"seconds": 0.0}
_recent: dict[str, tuple[float, str]] = {}  # sources -> (when computed, fingerprint), while holding


def hold_fingerprints(seconds: float) -> None:
    """Reuse a computed fingerprint for `seconds` in this process. A portfolio worker runs a repository every
    few hundred ms against the same sources: stat-ing a 2,600-file snapshot twice a run (~70 ms) bought
    nothing there. A change is then seen within `seconds`. 0 (the default): every call looks."""
    if _held["seconds"] != seconds:
        _held["seconds"] = seconds
        _recent.clear()


def fingerprint(sources: Sources) -> str:
    """A cheap change detector for advisory sources: paths, sizes and mtimes, not content."""
    if not _held["seconds"]:
        return _fingerprint(sources)
    key, now = str(sources), time.monotonic()
    recent = _recent.get(key)
    if recent is None or now - recent[0] > _held["seconds"]:
        recent = _recent[key] = (now, _fingerprint(sources))
    return recent[1]


def _fingerprint(sources: Sources) -> str:
    digest = hashlib.sha256()
    for path in split_sources(sources):
        kind = detect(path)
        digest.update(f"{kind}\0{path.resolve()}\0".encode())
        stats = _stats_below(str(path)) if kind == "directory" else _stat_of(path) if kind != "missing" else []
        for name, size, mtime in sorted(stats):
            digest.update(f"{name}\0{size}\0{mtime}\0".encode())
    return digest.hexdigest()


def _stat_of(path: Path) -> list[tuple[str, int, int]]:
    try:
        stat = path.stat()
    except OSError:
        return []
    return [(str(path), stat.st_size, stat.st_mtime_ns)]


def _stats_below(root: str) -> list[tuple[str, int, int]]:
    """(path, size, mtime) of the files `advisory_files` lists (a snapshot has thousands: DirEntry stats,
    no Path objects)."""
    found: list[tuple[str, int, int]] = []
    for entry in _advisory_entries(root):
        try:
            stat = entry.stat()
        except OSError:
            continue
        found.append((entry.path, stat.st_size, stat.st_mtime_ns))
    return found
