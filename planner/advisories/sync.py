"""`planner advisories sync`: osv.dev's per-ecosystem exports, verified, kept as the default advisory source.

Each ecosystem's `SOURCE/<ECOSYSTEM>/all.zip` (osv.dev's public bucket layout) is downloaded to a temporary
file beside its final place, checked (the length the server announced, then every record read as a run reads
it: `repocontext.osv.load`), and only when every ecosystem asked for passed are the new zips moved in and the
manifest replaced in one rename (layout: repocontext/osvsnapshot.py). A download cut short, a corrupt zip or a
record that is not OSV leaves the old snapshot whole and says so in one line.

An ecosystem already synced from the same bucket is updated incrementally when it can be: the bucket's
`SOURCE/<ECOSYSTEM>/modified_id.csv` (`<RFC3339 modified>,<ID>` a line, newest first) is read down to the
newest `modified` the snapshot holds; when at most INCREMENTAL_MAX records changed since, just those
(`SOURCE/<ECOSYSTEM>/<ID>.json`) are fetched and verified, and a new zip (the old records, those replaced or
added) is switched in the same way. More changes, no modified_id.csv, or `full=True`: all.zip.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from planner.errors import EnvironmentProblem, ExitCode, PlannerError
from repocontext import osvsnapshot
from repocontext.deps.files import EVALUATED_ECOSYSTEMS
from repocontext.osvsnapshot import Snapshot

DEFAULT_SOURCE = "https://osv-vulnerabilities.storage.googleapis.com"
# The ecosystems whose manifests and lockfiles the planner evaluates (one list: repocontext.deps.files).
DEFAULT_ECOSYSTEMS = tuple(e for e in osvsnapshot.KNOWN_ECOSYSTEMS if e in EVALUATED_ECOSYSTEMS)
# The defaults before crates.io, RubyGems, Packagist, Maven and NuGet were read: a snapshot holding all of these was
# synced by default (or wider), so a bare sync adds the ecosystems read since; one narrower was chosen, and is kept.
FIRST_DEFAULTS = frozenset({"PyPI", "npm", "Go"})
TIMEOUT_S = 60.0  # per socket operation: a stalled server fails the sync instead of hanging it
CHUNK = 1 << 16
PARTIAL = ".download-"  # a temporary download's prefix: one a killed sync left is removed by the next
INCREMENTAL_MAX = 500  # more records changed since the snapshot than this: all.zip is fetched instead
UNCHANGED = "the advisory snapshot is unchanged"
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]*")  # an OSV ID as a bucket file name (GHSA-…, PYSEC-…, GO-…)


class Progress(Protocol):
    def start(self, ecosystem: str, total: int | None) -> None: ...
    def advance(self, ecosystem: str, size: int) -> None: ...
    def verified(self, ecosystem: str, records: int, note: str = "") -> None: ...


class _Silent:
    def start(self, ecosystem: str, total: int | None) -> None:
        return None

    def advance(self, ecosystem: str, size: int) -> None:
        return None

    def verified(self, ecosystem: str, records: int, note: str = "") -> None:
        return None


class _Bytes(_Silent):
    """A progress that is told only of bytes (the records of an incremental update, one download each)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    def advance(self, ecosystem: str, size: int) -> None:
        self.progress.advance(ecosystem, size)


@dataclass
class _Fetched:
    ecosystem: str
    temp: Path | None  # None: nothing changed since the snapshot, its zip is kept
    sha256: str
    size: int
    records: int
    modified: str | None  # the newest `modified` of its records: where the next incremental update starts
    update: str = "full"  # or "incremental"
    changed: int = 0  # an incremental update's: records fetched (replaced or added)


class _Verified(NamedTuple):
    records: int
    modified: str | None
    ids: dict[str, str]  # member name -> the id of the record it holds
    issues: list[Any]


def sync(home: Path, ecosystems: Sequence[str] = (), source: str = DEFAULT_SOURCE,
         progress: Progress | None = None, full: bool = False) -> Snapshot:
    """Download, verify and switch to a new snapshot of `ecosystems` (default: `_defaults`); ecosystems not
    named keep their zips. One synced before from `source` is updated from the records changed since when they
    are few (module docstring), unless `full`. Raises a one-line PlannerError, the old snapshot untouched, when
    any ecosystem cannot be fetched or verified."""
    source = _base(source)
    where = osvsnapshot.folder(home)
    where.mkdir(parents=True, exist_ok=True)
    with _locked(where):
        _remove_partial(where)
        previous = osvsnapshot.read_folder(where)
        fetched: list[_Fetched] = []
        try:
            for name in _wanted(ecosystems, previous):
                fetched.append(_update(where, source, name, previous, full, progress or _Silent()))
        except BaseException:  # a failure or Ctrl-C: what was fetched so far is dropped, the snapshot unchanged
            for done in fetched:
                if done.temp is not None:
                    done.temp.unlink(missing_ok=True)
            raise
        return _switch(where, source, previous, fetched)


def _base(source: str) -> str:
    """The bucket URL; a local folder in the same layout (a mirror) is read as a file: URL."""
    if "://" in source:
        return source.rstrip("/")
    if Path(source).expanduser().is_dir():
        return Path(source).expanduser().resolve().as_uri()
    raise PlannerError(f"--source {source} is neither a URL (https://…) nor a folder in osv.dev's layout")


def _wanted(ecosystems: Sequence[str], previous: Snapshot | None) -> list[str]:
    names = [osvsnapshot.canonical(e) for e in ecosystems if e.strip()]
    if not names:
        names = _defaults(previous)
    for name in names:
        if "/" in name or "\\" in name or name.startswith("."):
            raise PlannerError(f"--ecosystem {name!r} is not an ecosystem name (e.g. PyPI, npm, Go, crates.io)")
    return list(dict.fromkeys(names))


def _defaults(previous: Snapshot | None) -> list[str]:
    """What a sync naming no ecosystem fetches: DEFAULT_ECOSYSTEMS the first time; after, those synced before,
    with the default ecosystems added unless the snapshot was narrowed below FIRST_DEFAULTS."""
    if not previous or not previous.ecosystems:
        return list(DEFAULT_ECOSYSTEMS)
    synced = sorted(previous.ecosystems)
    if not set(synced) >= FIRST_DEFAULTS:
        return synced
    return [*synced, *(name for name in DEFAULT_ECOSYSTEMS if name not in previous.ecosystems)]


@contextmanager
def _locked(where: Path) -> Iterator[None]:
    """One sync at a time per PLANNER_HOME (two would race on the manifest)."""
    import fcntl

    with (where / ".sync.lock").open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise EnvironmentProblem(f"another `planner advisories sync` is running on {where}") from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _remove_partial(where: Path) -> None:
    for leftover in where.glob(f"*/{PARTIAL}*"):
        leftover.unlink(missing_ok=True)


def _fetch(where: Path, source: str, name: str, progress: Progress) -> _Fetched:
    url = f"{source}/{urllib.parse.quote(name)}/all.zip"
    folder = where / name
    folder.mkdir(exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=PARTIAL, suffix=".zip", dir=folder)
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            digest, size = _download(url, name, out, progress)
        verified = _verify(temp, name, url)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    progress.verified(name, verified.records)
    return _Fetched(ecosystem=name, temp=temp, sha256=digest, size=size, records=verified.records,
                    modified=verified.modified)


def _download(url: str, name: str, out: Any, progress: Progress,
              missing: BaseException | None = None) -> tuple[str, int]:
    """Stream `url` into `out`: (sha256, bytes). Every way a download can fail is one line naming it; HTTP 404
    raises `missing` when given."""
    unchanged = UNCHANGED
    request = urllib.request.Request(url, headers={"User-Agent": "tccm-planner (planner advisories sync)"})
    digest, size = hashlib.sha256(), 0
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            total = _length(response.headers.get("Content-Length"))
            progress.start(name, total)
            while chunk := response.read(CHUNK):
                out.write(chunk)
                digest.update(chunk)
                size += len(chunk)
                progress.advance(name, len(chunk))
    except urllib.error.HTTPError as exc:
        if exc.code == 404 and missing is not None:
            raise missing from None
        if exc.code == 404:
            raise PlannerError(f"advisories sync: no {name} export at {url} (HTTP 404; is {name!r} an OSV "
                               f"ecosystem?); {unchanged}") from None
        raise EnvironmentProblem(f"advisories sync: {url} answered HTTP {exc.code} {exc.reason}; {unchanged}") \
            from None
    except urllib.error.URLError as exc:
        raise EnvironmentProblem(f"advisories sync: cannot reach {url}: {exc.reason}; {unchanged}") from None
    except (http.client.HTTPException, ConnectionError, TimeoutError) as exc:
        raise EnvironmentProblem(f"advisories sync: the download of {url} was interrupted after {size:,} bytes "
                                 f"({exc.__class__.__name__}: {exc}); {unchanged}") from None
    except OSError as exc:
        raise EnvironmentProblem(f"advisories sync: cannot download {url}: {exc}; {unchanged}") from None
    except ValueError as exc:  # a scheme urllib does not know
        raise PlannerError(f"advisories sync: cannot download {url}: {exc}; {unchanged}") from None
    if total is not None and size != total:  # http.client ends a body cut short quietly: the length tells
        raise EnvironmentProblem(f"advisories sync: the download of {url} was interrupted after {size:,} of "
                                 f"{total:,} bytes; {unchanged}")
    return digest.hexdigest(), size


def _length(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


def _verify(path: Path, name: str, url: str) -> _Verified:
    """The OSV records the zip holds, each read as a run reads it; one line naming the first problem."""
    verified = _read_records(path)
    issues = verified.issues
    if issues:
        where = issues[0].source.rpartition("!")[2] if "!" in issues[0].source else "the zip"
        more = f" (+{len(issues) - 1} more problems)" if len(issues) > 1 else ""
        raise EnvironmentProblem(f"advisories sync: {url} is not a valid OSV export: {where}: {issues[0].reason}"
                                 f"{more}; the advisory snapshot is unchanged")
    if not verified.records:
        raise EnvironmentProblem(f"advisories sync: {url} holds no OSV record; the advisory snapshot is unchanged")
    return verified


def _read_records(path: Path, with_ids: bool = False) -> _Verified:
    """Every record of a zip read as a run reads it: how many, the newest `modified`, the problems, and (asked)
    which record each member holds."""
    from repocontext.osv.load import advisories

    issues: list[Any] = []
    records, newest, newest_text = 0, None, None
    ids: dict[str, str] = {}
    for label, advisory in advisories(path, issues):
        records += 1
        if with_ids:
            ids[label.rpartition("!")[2]] = advisory.id
        when = _when(advisory.modified)
        if when is not None and (newest is None or when > newest):
            newest, newest_text = when, advisory.modified
    return _Verified(records=records, modified=newest_text, ids=ids, issues=issues)


def _when(text: object) -> datetime | None:
    """An RFC 3339 time (`2024-05-01T12:34:56.123456789Z`) as an aware datetime; None when it is not one."""
    if not isinstance(text, str) or not text.strip():
        return None
    value = text.strip()
    if value[-1:] in ("Z", "z"):
        value = value[:-1] + "+00:00"
    fraction = re.match(r"(.*T\d\d:\d\d:\d\d)\.(\d+)(.*)", value)
    if fraction:  # datetime takes at most microseconds; osv.dev writes up to nanoseconds
        value = f"{fraction[1]}.{fraction[2][:6]}{fraction[3]}"
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _update(where: Path, source: str, name: str, previous: Snapshot | None, full: bool,
            progress: Progress) -> _Fetched:
    """The ecosystem updated from its records changed since the snapshot when that is possible, else all.zip."""
    entry = None if full or previous is None or previous.source != source else previous.ecosystems.get(name)
    if entry is not None:
        done = _incremental(where, source, name, entry, progress)
        if done is not None:
            return done
    return _fetch(where, source, name, progress)


class _Absent(Exception):
    """The bucket has no modified_id.csv for an ecosystem (a mirror of all.zip files only)."""


class _Enough(Exception):
    """modified_id.csv was read down to the snapshot's time (or past INCREMENTAL_MAX changes): stop reading."""


class _Changes:
    """modified_id.csv read as it streams in: the IDs modified since `since`, newest first, stopping at the
    first line older (a line as old whose record the snapshot already holds is the snapshot's own)."""

    def __init__(self, url: str, since: datetime, held: set[str]) -> None:
        self.url, self.since, self.held = url, since, held
        self.ids: list[str] = []
        self.too_many = False
        self.pending = b""
        self.line = 0

    def write(self, chunk: bytes) -> None:
        *lines, self.pending = (self.pending + chunk).split(b"\n")
        for raw in lines:
            self._take(raw)

    def finish(self) -> None:
        self._take(self.pending)
        self.pending = b""

    def _take(self, raw: bytes) -> None:
        self.line += 1
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            return
        stamp, _, ident = text.partition(",")
        when, ident = _when(stamp), ident.strip()
        if when is None or not _ID.fullmatch(ident):
            raise EnvironmentProblem(f"advisories sync: {self.url} line {self.line} is not `<RFC3339 time>,<ID>` "
                                     f"({text[:80]!r}); {UNCHANGED}")
        if when < self.since:
            raise _Enough
        if (when == self.since and f"{ident}.json" in self.held) or ident in self.ids:
            return
        self.ids.append(ident)
        if len(self.ids) > INCREMENTAL_MAX:
            self.too_many = True
            raise _Enough


def _changed(source: str, name: str, since: datetime, held: set[str]) -> list[str] | None:
    """The IDs modified since `since` by the bucket's modified_id.csv; None when all.zip is the way (no such
    file, or more than INCREMENTAL_MAX changes)."""
    url = f"{source}/{urllib.parse.quote(name)}/modified_id.csv"
    changes = _Changes(url, since, held)
    try:
        _download(url, name, changes, _Silent(), missing=_Absent())
        changes.finish()
    except _Absent:
        return None
    except _Enough:
        pass
    return None if changes.too_many else changes.ids


def _incremental(where: Path, source: str, name: str, entry: dict[str, Any], progress: Progress) -> _Fetched | None:
    """The snapshot's zip with the records modified since replaced or added, verified; None when all.zip
    must be fetched instead (no modified time recorded, no modified_id.csv, too many changes)."""
    old = where / str(entry["file"])
    since = _when(entry.get("modified"))
    if since is None or not old.is_file():
        return None
    try:
        with zipfile.ZipFile(old) as archive:
            held = set(archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return None
    ids = _changed(source, name, since, held)
    if ids is None:
        return None
    progress.start(name, None)
    records = int(entry.get("records") or 0)
    if not ids:
        progress.verified(name, records, " (incremental: none changed)")
        return _Fetched(ecosystem=name, temp=None, sha256=str(entry.get("sha256") or ""),
                        size=int(entry.get("bytes") or 0), records=records, modified=str(entry["modified"]),
                        update="incremental")
    delta = _fetch_records(where / name, source, name, ids, progress)
    try:
        verified = _read_records(delta, with_ids=True)
        _check_records(verified, source, name, ids)
        temp, digest, size = _merge(old, delta, where / name)
    finally:
        delta.unlink(missing_ok=True)
    newest = str(entry["modified"])
    if verified.modified is not None and (_when(verified.modified) or since) > since:
        newest = verified.modified
    records += sum(1 for ident in ids if f"{ident}.json" not in held)
    progress.verified(name, records, f" (incremental: {len(ids):,} fetched)")
    return _Fetched(ecosystem=name, temp=temp, sha256=digest, size=size, records=records, modified=newest,
                    update="incremental", changed=len(ids))


def _fetch_records(folder: Path, source: str, name: str, ids: list[str], progress: Progress) -> Path:
    """`SOURCE/<ECOSYSTEM>/<ID>.json` for each ID, into a temporary zip of `<ID>.json` members."""
    fd, temp_name = tempfile.mkstemp(prefix=PARTIAL, suffix=".delta.zip", dir=folder)
    os.close(fd)
    temp = Path(temp_name)
    try:
        with zipfile.ZipFile(temp, "w", zipfile.ZIP_DEFLATED) as delta:
            for ident in ids:
                url = f"{source}/{urllib.parse.quote(name)}/{urllib.parse.quote(ident)}.json"
                missing = EnvironmentProblem(f"advisories sync: {url} (listed in {name}/modified_id.csv) answered "
                                             f"HTTP 404; {UNCHANGED}")
                body = _Buffer()
                _download(url, name, body, _Bytes(progress), missing=missing)
                delta.writestr(f"{ident}.json", bytes(body.data))
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


class _Buffer:
    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, chunk: bytes) -> None:
        self.data += chunk


def _check_records(verified: _Verified, source: str, name: str, ids: list[str]) -> None:
    """Each fetched record read as a run reads it, and the one its name says; one line naming the first not."""
    quoted = urllib.parse.quote(name)
    if verified.issues:
        issue = verified.issues[0]
        member = issue.source.rpartition("!")[2]
        more = f" (+{len(verified.issues) - 1} more problems)" if len(verified.issues) > 1 else ""
        raise EnvironmentProblem(f"advisories sync: {source}/{quoted}/{member} is not a valid OSV record: "
                                 f"{issue.reason}{more}; {UNCHANGED}")
    for ident in ids:
        got = verified.ids.get(f"{ident}.json")
        if got != ident:
            what = f"holds {got}" if got else "holds no OSV record"
            raise EnvironmentProblem(f"advisories sync: {source}/{quoted}/{ident}.json {what}; {UNCHANGED}")


def _merge(old: Path, delta: Path, folder: Path) -> tuple[Path, str, int]:
    """A new zip beside the old: its members but those `delta` replaces, then `delta`'s: (path, sha256, bytes)."""
    fd, temp_name = tempfile.mkstemp(prefix=PARTIAL, suffix=".zip", dir=folder)
    os.close(fd)
    temp = Path(temp_name)
    try:
        with zipfile.ZipFile(old) as source, zipfile.ZipFile(delta) as changes, \
                zipfile.ZipFile(temp, "w", zipfile.ZIP_DEFLATED) as merged:
            replaced = set(changes.namelist())
            for info in source.infolist():
                if info.filename not in replaced:
                    merged.writestr(info, source.read(info))
            for info in changes.infolist():
                merged.writestr(info, changes.read(info))
        digest, size = hashlib.sha256(), 0
        with temp.open("rb") as written:
            while chunk := written.read(CHUNK):
                digest.update(chunk)
                size += len(chunk)
    except (OSError, zipfile.BadZipFile, zlib.error) as exc:
        temp.unlink(missing_ok=True)
        raise EnvironmentProblem(f"advisories sync: cannot update {old}: {exc}; {UNCHANGED}") from None
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp, digest.hexdigest(), size


def _switch(where: Path, source: str, previous: Snapshot | None, fetched: list[_Fetched]) -> Snapshot:
    """Move the verified zips in and replace the manifest in one rename; then drop zips neither the new nor the
    previous manifest names (the previous ones stay for runs still reading them)."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    ecosystems = dict(previous.ecosystems) if previous else {}
    for done in fetched:
        if done.temp is None:  # nothing changed since: the zip stays, the time moves on
            file = str(ecosystems[done.ecosystem]["file"])
        else:
            final = where / done.ecosystem / f"{done.sha256[:16]}.zip"
            os.replace(done.temp, final)
            file = f"{done.ecosystem}/{final.name}"
        ecosystems[done.ecosystem] = {"file": file, "records": done.records, "synced_at": now,
                                      "sha256": done.sha256, "bytes": done.size, "modified": done.modified,
                                      "update": done.update}
        if done.update == "incremental":
            ecosystems[done.ecosystem]["changed"] = done.changed
    manifest = {"format": osvsnapshot.FORMAT, "source": source, "synced_at": now,
                "ecosystems": dict(sorted(ecosystems.items()))}
    _write_atomic(where / osvsnapshot.MANIFEST, json.dumps(manifest, indent=2) + "\n")
    kept = {str(e["file"]) for e in ecosystems.values()}
    kept |= {str(e["file"]) for e in (previous.ecosystems if previous else {}).values()}
    for old in where.glob("*/*.zip"):
        if f"{old.parent.name}/{old.name}" not in kept and not old.name.startswith(PARTIAL):
            with suppress(OSError):
                old.unlink()
    snapshot = osvsnapshot.read_folder(where)
    if snapshot is None:
        raise EnvironmentProblem(f"advisories sync: the manifest under {where} could not be read back")
    return snapshot


def _write_atomic(path: Path, text: str) -> None:
    fd, temp = tempfile.mkstemp(prefix=".manifest-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def interrupted() -> PlannerError:
    return PlannerError("advisories sync interrupted; the advisory snapshot is unchanged", ExitCode.INTERRUPTED)
