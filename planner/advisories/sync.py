"""`planner advisories sync`: osv.dev's per-ecosystem exports, verified, kept as the default advisory source.

Each ecosystem's `SOURCE/<ECOSYSTEM>/all.zip` (osv.dev's public bucket layout) is downloaded to a temporary
file beside its final place, checked (the length the server announced, then every record read as a run reads
it: `repocontext.osv.load`), and only when every ecosystem asked for passed are the new zips moved in and the
manifest replaced in one rename (layout: repocontext/osvsnapshot.py). A download cut short, a corrupt zip or a
record that is not OSV leaves the old snapshot whole and says so in one line.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from planner.errors import EnvironmentProblem, ExitCode, PlannerError
from repocontext import osvsnapshot
from repocontext.osvsnapshot import Snapshot

DEFAULT_SOURCE = "https://osv-vulnerabilities.storage.googleapis.com"
DEFAULT_ECOSYSTEMS = ("PyPI", "npm", "Go")  # the ecosystems whose lockfiles the planner evaluates
TIMEOUT_S = 60.0  # per socket operation: a stalled server fails the sync instead of hanging it
CHUNK = 1 << 16
PARTIAL = ".download-"  # a temporary download's prefix: one a killed sync left is removed by the next


class Progress(Protocol):
    def start(self, ecosystem: str, total: int | None) -> None: ...
    def advance(self, ecosystem: str, size: int) -> None: ...
    def verified(self, ecosystem: str, records: int) -> None: ...


class _Silent:
    def start(self, ecosystem: str, total: int | None) -> None:
        return None

    def advance(self, ecosystem: str, size: int) -> None:
        return None

    def verified(self, ecosystem: str, records: int) -> None:
        return None


@dataclass
class _Fetched:
    ecosystem: str
    temp: Path
    sha256: str
    size: int
    records: int


def sync(home: Path, ecosystems: Sequence[str] = (), source: str = DEFAULT_SOURCE,
         progress: Progress | None = None) -> Snapshot:
    """Download, verify and switch to a new snapshot of `ecosystems` (default: those already synced, else
    DEFAULT_ECOSYSTEMS); ecosystems not named keep their zips. Raises a one-line PlannerError, the old
    snapshot untouched, when any ecosystem cannot be fetched or verified."""
    source = _base(source)
    where = osvsnapshot.folder(home)
    where.mkdir(parents=True, exist_ok=True)
    with _locked(where):
        _remove_partial(where)
        previous = osvsnapshot.read_folder(where)
        fetched: list[_Fetched] = []
        try:
            for name in _wanted(ecosystems, previous):
                fetched.append(_fetch(where, source, name, progress or _Silent()))
        except BaseException:  # a failure or Ctrl-C: what was fetched so far is dropped, the snapshot unchanged
            for done in fetched:
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
        names = sorted(previous.ecosystems) if previous and previous.ecosystems else list(DEFAULT_ECOSYSTEMS)
    for name in names:
        if "/" in name or "\\" in name or name.startswith("."):
            raise PlannerError(f"--ecosystem {name!r} is not an ecosystem name (e.g. PyPI, npm, Go, crates.io)")
    return list(dict.fromkeys(names))


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
        records = _verify(temp, name, url)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    progress.verified(name, records)
    return _Fetched(ecosystem=name, temp=temp, sha256=digest, size=size, records=records)


def _download(url: str, name: str, out: Any, progress: Progress) -> tuple[str, int]:
    """Stream `url` into `out`: (sha256, bytes). Every way a download can fail is one line naming it."""
    unchanged = "the advisory snapshot is unchanged"
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


def _verify(path: Path, name: str, url: str) -> int:
    """How many OSV records the zip holds, each read as a run reads it; one line naming the first problem."""
    from repocontext.osv.load import advisories

    issues: list[Any] = []
    records = sum(1 for _ in advisories(path, issues))
    if issues:
        where = issues[0].source.rpartition("!")[2] if "!" in issues[0].source else "the zip"
        more = f" (+{len(issues) - 1} more problems)" if len(issues) > 1 else ""
        raise EnvironmentProblem(f"advisories sync: {url} is not a valid OSV export: {where}: {issues[0].reason}"
                                 f"{more}; the advisory snapshot is unchanged")
    if not records:
        raise EnvironmentProblem(f"advisories sync: {url} holds no OSV record; the advisory snapshot is unchanged")
    return records


def _switch(where: Path, source: str, previous: Snapshot | None, fetched: list[_Fetched]) -> Snapshot:
    """Move the verified zips in and replace the manifest in one rename; then drop zips neither the new nor the
    previous manifest names (the previous ones stay for runs still reading them)."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    ecosystems = dict(previous.ecosystems) if previous else {}
    for done in fetched:
        final = where / done.ecosystem / f"{done.sha256[:16]}.zip"
        os.replace(done.temp, final)
        ecosystems[done.ecosystem] = {"file": f"{done.ecosystem}/{final.name}", "records": done.records,
                                      "synced_at": now, "sha256": done.sha256, "bytes": done.size}
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
