"""A stored RepoContext: a small manifest naming content-addressed parts.

    repos/<repo id>/
      latest                               the current manifest's file name
      <commit>.<digest>.manifest.json      section → part (or, for a split section, member → part)
      parts/<sha1>.json                    immutable bytes, shared by every snapshot holding them
      .lock                                held while a snapshot is written

Why parts: a bundle build needs the file index and the few sections (or the
one call-site group) its TCCM names, not megabytes of call sites; and a
re-gather after a small commit rewrites only the parts whose bytes changed.
A split section's member part is: its small fields as one JSON line, a layout
line, then each long list as JSON-array chunks, one per line (parsed only
when read; see lazyjson). Writing is crash-safe: parts, then the manifest,
then `latest`, each atomically; only then are parts no manifest kept removed.
A manifest is kept while it is current, the one before it, or open: a reader
holds a shared lock on the manifest it opened for as long as it may read its
parts (a lease; the OS drops it when the reader exits), and the collector
skips every manifest it cannot lock exclusively. So any number of processes
can read and gather one repository at once without losing a part under a reader.
"""

from __future__ import annotations

import fcntl
import hashlib
import itertools
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from repocontext.lazyjson import ChunkedList, Columns, LazyMember, LazySection, StoreError, parse

FORMAT = 2
POINTER = "latest"
SUFFIX = ".manifest.json"


def digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


_TEMP_SERIAL = itertools.count()


def _temp_file(path: Path) -> tuple[int, Path]:
    """A new private file beside `path` (open for writing), as tempfile.mkstemp makes one: tempfile's import
    (with shutil and random) was ~3 ms of a small gather. The name holds this process's id and a serial, and
    O_EXCL refuses one left by a killed process with a recycled id: the next serial is tried."""
    while True:
        tmp = path.parent / f".{path.name}.{os.getpid()}-{next(_TEMP_SERIAL)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), tmp
        except FileExistsError:
            continue


def atomic_write(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temp_file(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode() if isinstance(data, str) else data)
        # Rename without fsync: a killed process leaves the old file or the new one, never half of one;
        # only an OS crash could lose a recent write, and every record here can be re-made (a re-gather).
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def locked(directory: Path) -> Iterator[None]:
    """One writer at a time per repository (a hook's background gather and a manual one, say)."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def _reading(path: Path, what: str = "part") -> Iterator[None]:
    """An OSError while reading a stored file becomes the one StoreError that says what to do."""
    try:
        yield
    except OSError as exc:
        raise StoreError(f"RepoContext {what} {path} is unreadable ({exc.strerror}); re-run `planner gather`") from exc


def current(directory: Path) -> str | None:
    """The current manifest's file name, or None when the repository has no snapshot.

    A `latest` from the older one-file layout raises StoreError (re-gathering replaces it)."""
    try:
        name = (directory / POINTER).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not name:
        return None
    if not name.endswith(SUFFIX) or "/" in name:
        raise StoreError(f"the RepoContext under {directory} has an older layout; re-run `planner gather`")
    return name


def manifest_key(name: str) -> str:
    """The snapshot key (commit or "worktree") a manifest file name carries."""
    return name[: -len(SUFFIX)].rpartition(".")[0]


def write(directory: Path, key: str, sections: Mapping[str, Any], parts: Mapping[str, bytes],
          rewrite: bool = False) -> str:
    """Store one snapshot: `sections` is the manifest body, `parts` its part bytes by digest. A part
    already stored is kept, unless `rewrite` (a full gather: it also repairs a damaged part).
    Returns the manifest's file name."""
    body = orjson.dumps({"format": FORMAT, "key": key, "sections": sections})
    name = f"{key}.{digest(body)[:16]}{SUFFIX}"
    with locked(directory):
        store = directory / "parts"
        for sha, data in parts.items():
            target = store / f"{sha}.json"
            if rewrite or not target.exists():
                atomic_write(target, data)
        # Parts kept from the previous snapshot may have been collected by gathers that finished meanwhile.
        missing = sorted(sha for sha in _referenced({"sections": sections}) if not (store / f"{sha}.json").exists())
        if missing:
            raise StoreError(f"parts of the previous RepoContext under {directory} were removed by a concurrent "
                             f"gather ({missing[0]}…); gather again")
        if not (directory / name).is_file():
            # The name is the body's digest: an existing file holds these very bytes, and replacing it would
            # give the name a new inode, so a reader's lease (a lock on the old inode) would no longer keep it
            atomic_write(directory / name, body)
        try:
            previous = current(directory)
        except StoreError:
            previous = None
        atomic_write(directory / POINTER, name + "\n")
        _collect(directory, {name} if previous is None else {name, previous})
    return name


class Lease:
    """A shared lock on one manifest, held by everything that may still read its parts (the context,
    its lazy sections and their chunk readers); the fd closes when the last of them is gone."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __del__(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)


def _leased(path: Path) -> Lease | None:
    """A shared lock on the manifest at `path` — None when the file is gone (collected) or was
    replaced between the open and the lock, so the caller re-reads `latest`."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        if os.stat(path).st_ino == os.fstat(fd).st_ino:  # still the file the collector would have to lock
            return Lease(fd)
    except OSError:
        pass
    os.close(fd)
    return None


def _in_use(path: Path) -> bool:
    """True when a reader holds `path`'s lease; otherwise the file is removed while locked."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return True
    try:
        path.unlink(missing_ok=True)
    finally:
        os.close(fd)
    return False


def _referenced(manifest: Mapping[str, Any]) -> Iterator[str]:
    for entry in manifest.get("sections", {}).values():
        if "part" in entry:
            yield entry["part"]
        for member in entry.get("split", {}).values():
            yield member["part"]


def _collect(directory: Path, keep: set[str]) -> None:
    """Remove manifests other than `keep` that no reader holds, the parts no remaining manifest names,
    and the older layout's files."""
    keep = set(keep) | {path.name for path in directory.glob(f"*{SUFFIX}")
                        if path.name not in keep and _in_use(path)}
    used: set[str] = set()
    for name in keep:
        try:
            used.update(_referenced(orjson.loads((directory / name).read_bytes())))
        except (OSError, orjson.JSONDecodeError):
            continue
    for path in (directory / "parts").glob("*.json"):
        if path.stem not in used:
            path.unlink(missing_ok=True)
    for path in directory.glob("*.json"):  # the older layout: <commit>.json, probe-cache.json, *.sections-*/
        if not path.name.endswith(SUFFIX):
            path.unlink(missing_ok=True)
    for path in directory.glob("*.sections-*"):
        import shutil  # only for a store of the older layout

        shutil.rmtree(path, ignore_errors=True)
    (directory / "latest-sections").unlink(missing_ok=True)


class LazyContext(Mapping[str, Any]):
    """A stored RepoContext as read-only JSON; a section is read and parsed on first access."""

    def __init__(self, directory: Path, name: str, lease: Lease | None = None) -> None:
        self._dir = directory
        self.name = name
        self._lease = lease  # its parts stay while this object, or a section read from it, lives
        path = directory / name
        with _reading(path, "manifest"):
            if lease is None:
                manifest = parse(path.read_bytes(), str(path))
            else:
                with os.fdopen(os.dup(lease.fd), "rb") as handle:
                    manifest = parse(handle.read(), str(path))
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise StoreError(f"RepoContext manifest {path} has an unknown format; re-run `planner gather`")
        self.key: str = manifest["key"]
        self._sections: dict[str, Any] = manifest["sections"]
        self._cache: dict[str, Any] = {}

    def _read(self, sha: str) -> bytes:
        path = self._dir / "parts" / f"{sha}.json"
        with _reading(path):
            return path.read_bytes()

    def __getitem__(self, section: str) -> Any:
        if section not in self._cache:
            entry = self._sections[section]  # KeyError for an unknown section, as a dict would
            if "split" in entry:
                members = {key: self._member(key, spec) for key, spec in entry["split"].items()}
                self._cache[section] = LazySection(members, entry["bytes"])
            elif "columns" in entry:
                columns = parse(self._read(entry["part"]), entry["part"])
                self._cache[section] = Columns(columns, entry["columns"], entry["bytes"])
            else:
                self._cache[section] = parse(self._read(entry["part"]), entry["part"])
        return self._cache[section]

    def _member(self, key: str, spec: Mapping[str, Any]) -> LazyMember:
        path = self._dir / "parts" / f"{spec['part']}.json"
        return LazyMember(lambda: read_member(path, self._lease), spec["bytes"], spec.get("summary", {}), spec)

    def __iter__(self) -> Iterator[str]:
        return iter(self._sections)

    def __len__(self) -> int:
        return len(self._sections)

    def loaded(self, section: str) -> Any:
        """The section's value if it has been read already, else None (never reads it)."""
        return self._cache.get(section)

    def part_of(self, section: str) -> Mapping[str, Any]:
        """The manifest entry of a section (which part(s) hold it), for a writer reusing them."""
        return self._sections[section]


HEAD_READ = 64 * 1024


def read_member(path: Path, lease: Lease | None = None) -> tuple[dict[str, Any], dict[str, ChunkedList], list[str]]:
    """A split member's part → (small fields, chunked lists, field order). Only the first two lines are
    read now; a chunk is read (pread at its recorded offset) when the list is indexed there."""
    where = str(path)
    with _reading(path), open(path, "rb") as handle:
        data = handle.read(HEAD_READ)
        while data.count(b"\n") < 2:
            more = handle.read(HEAD_READ)
            if not more:
                break
            data += more
    head_line, layout_line, _ = [*data.split(b"\n", 2), b"", b""][:3]
    head, layout = parse(head_line, where), parse(layout_line, where)
    base = len(head_line) + len(layout_line) + 2
    lists: dict[str, ChunkedList] = {}
    for field, spec in layout["lists"].items():
        offsets = spec["offsets"]

        def fetch(index: int, offsets: list[int] = offsets, lease: Lease | None = lease) -> bytes:
            return _pread(path, base + offsets[index], offsets[index + 1] - offsets[index] - 1)

        lists[field] = ChunkedList(fetch, spec["chunks"], spec["count"], spec["chunk"], spec["bytes"], where)
    return head, lists, layout["order"]


def _pread(path: Path, offset: int, length: int) -> bytes:
    with _reading(path):
        fd = os.open(path, os.O_RDONLY)
        try:
            data = os.pread(fd, length, offset)
        finally:
            os.close(fd)
    if len(data) != length:
        raise StoreError(f"RepoContext part {path} is truncated; re-run `planner gather`")
    return data


def open_current(directory: Path) -> LazyContext | None:
    """The current snapshot with its lease held, or None when there is none. A manifest collected
    between reading `latest` and locking it means a newer one is current: read `latest` again."""
    for _ in range(100):
        name = current(directory)
        if name is None:
            return None
        lease = _leased(directory / name)
        if lease is not None:
            return LazyContext(directory, name, lease)
        if current(directory) == name:  # `latest` names a file that is not there: no snapshot
            return None
    raise StoreError(f"the RepoContext under {directory} kept changing while being opened; try again")

