"""The probe contract: how a probe declares what it reads and what it produces.

A probe is a class with a name, a version, the task classes it serves, the
file globs it reads (`inputs`) and the RepoContext keys it writes
(`produces`, dotted: "containers.dockerfiles"). Adding a probe is adding a
module under `repocontext/probes/` and listing it in the registry; nothing
else changes. Probes must be deterministic and must not raise for bad repo
content: they report problems as diagnostics.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

from repocontext import globs, parallel
from repocontext.model import Diagnostic, DiagnosticLevel, FileRecord
from repocontext.secrets import RULES_DIGEST, content_rule_of_bytes, path_rule, scrub

MAX_READ_BYTES = 2_000_000  # probes never read files larger than this


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


# In `changes` for run_incremental: the file is not there (added: no old result; removed: no new one). A
# sentinel, not None, because None is an ordinary analyze result (an unreadable file, a non-test source file).
ABSENT: Final = _Absent()


class CannotIncrement(Exception):  # a signal: the caller runs the full combine instead
    """Raised inside an incremental combine that cannot guarantee the full combine's output."""


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON-like values through the Mapping / Sequence protocols, so a lazily parsed previous value
    compares equal to plain dicts and lists (a Sequence need not define __eq__)."""
    if a == b:  # plain values: C speed; == never says equal wrongly, it may only miss a lazy Sequence
        return True
    if isinstance(a, Mapping) or isinstance(b, Mapping):
        return (isinstance(a, Mapping) and isinstance(b, Mapping) and len(a) == len(b)
                and all(key in b and json_equal(value, b[key]) for key, value in a.items()))
    if isinstance(a, Sequence) and not isinstance(a, str) and isinstance(b, Sequence) and not isinstance(b, str):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return False


def index_diff(previous: Mapping[str, str], files: Sequence[FileRecord]) -> dict[str, tuple[str | None, str | None]]:
    """path → (old blob id or None, new blob id or None) for every path added, removed or changed between the
    previous file index (path → sha) and `files`."""
    diff: dict[str, tuple[str | None, str | None]] = {}
    kept = 0
    for record in files:
        old = previous.get(record.path)
        kept += old is not None
        if old != record.sha:
            diff[record.path] = (old, record.sha)
    if kept < len(previous):  # something was removed: find it (one more pass, only then)
        present = {record.path for record in files}
        diff.update((path, (sha, None)) for path, sha in previous.items() if path not in present)
    return diff


@dataclass(frozen=True, slots=True)
class Analyses:
    """A PerFileProbe's plan over its input files (see PerFileProbe.plan)."""

    records: list[FileRecord]  # the input files, in index order
    keys: list[str]  # their cache keys, "path\0sha"
    todo: dict[str, FileRecord]  # analysis key → the first record needing it (files not in the cache)
    shared: dict[str, str]  # cache key → analysis key, for the records not in the cache


@dataclass(frozen=True, slots=True)
class Started:
    """A probe's costly work, begun in forked workers ahead of the probe's turn (see Probe.start)."""

    keys: list[Any]  # what was started (a PerFileProbe's analysis keys, in order): the probe checks it
    pending: parallel.Pending


def take_started(ctx: ProbeContext, name: str, keys: list[Any]) -> parallel.Pending | None:
    """The work `start` began for probe `name`, if it began the work now wanted (`keys`); work begun for
    anything else is cancelled."""
    started = ctx.started.pop(name, None)
    if started is None:
        return None
    if started.keys != keys:
        started.pending.cancel()
        return None
    return started.pending


@dataclass
class ProbeContext:
    """What a probe may look at: the file index, the work tree (read-only), options."""

    root: Path
    files: Sequence[FileRecord]
    options: Mapping[str, str] = field(default_factory=dict)
    upstream: Mapping[str, Any] = field(default_factory=dict)  # sections produced so far
    workers: int = 1  # processes a PerFileProbe may use for files not in its cache
    # Per-file results of the PerFileProbes run so far in this gather: probe name → {"path\0sha": result}.
    analysed: dict[str, dict[str, Any]] = field(default_factory=dict)
    memo: dict[str, Any] = field(default_factory=dict)  # values worked out once per gather (see Probe._extra)
    started: dict[str, Started] = field(default_factory=dict)  # probe name → its costly work, begun early
    # A re-gather's probe cache: cached(slot, "path\0sha") is a per-file result of an earlier gather, KeyError
    # when there is none (a probe may reuse one instead of reading the file again).
    cached: Callable[[str, str], Any] | None = None
    _by_path: dict[str, FileRecord] = field(default_factory=dict, repr=False)
    _sorted: list[str] | None = field(default=None, init=False, repr=False)
    _sorted_known: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        self._by_path = {f.path: f for f in self.files}
        self._index = globs.PathIndex([f.path for f in self.files])
        self._real_root = os.path.realpath(self.root)

    def matching_paths(self, patterns: Sequence[str]) -> list[str]:
        """Indexed paths matching any pattern, sorted; base-name globs cost a look at each distinct name, not
        a pass over every record as `matching` makes."""
        hits: set[str] = set()
        for pattern in patterns:
            hits.update(self._index.match(pattern))
        return sorted(hits)

    def sorted_paths(self) -> list[str] | None:
        """All indexed paths when the index is in path order (as `build_index` makes it), else None; checked
        once per context. Incremental combines rely on it (bisect, and "first file in path order")."""
        if not self._sorted_known:
            paths = self._index.paths
            # Strictly ascending: sorted (a C-speed check) and no path twice.
            self._sorted = paths if len(self._by_path) == len(paths) and paths == sorted(paths) else None
            self._sorted_known = True
        return self._sorted

    def named(self, name: str) -> Sequence[str]:
        """The indexed paths whose base name is `name`, in index order (read-only)."""
        return self._index.by_name.get(name, ())

    def has(self, path: str) -> bool:
        return path in self._by_path

    def matching(self, patterns: Sequence[str]) -> list[FileRecord]:
        """Indexed files matching any pattern, in index order (each pattern uses the base-name index)."""
        hits: set[str] = set()
        for pattern in patterns:
            hits.update(self._index.match(pattern))
        if len(hits) * 4 < len(self.files) and self.sorted_paths() is not None:  # few: no pass over every file
            return [self._by_path[path] for path in sorted(hits)]
        return [f for f in self.files if f.path in hits]

    def record(self, path: str) -> FileRecord | None:
        return self._by_path.get(path)

    def read_text(self, path: str) -> str | None:
        """The text of an indexed file, or None when it is secret, binary, too big or unreadable.

        Secret files are refused by name before opening, and by content after
        reading; secret values in the files kept are redacted: a probe never receives a secret.
        """
        data = self._read(path)
        return None if data is None else scrub(data, path)[0]

    def read_source(self, path: str) -> str | None:
        """`read_text` without the redaction of secret values, for a parser that keeps only names and
        positions (call sites, tests): the caller redacts what it keeps (`secrets.redact`). Redacting a whole
        source file first was a third of a cold gather's call-site work. Denied files are refused alike."""
        data = self._read(path)
        if data is None or content_rule_of_bytes(data, path):
            return None
        return data.decode("utf-8", errors="replace")

    def _read(self, path: str) -> bytes | None:
        """The bytes of an indexed text file not denied by name, or None (see read_text)."""
        if path not in self._by_path or path_rule(path):
            return None
        # Indexed paths never pass through a symlinked directory (the index does not follow links),
        # so refusing a symlink at the last component (O_NOFOLLOW) keeps reads inside the repo.
        try:
            fd = os.open(os.path.join(self._real_root, path), os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as handle:
                data = handle.read(MAX_READ_BYTES + 1)
        except OSError:
            return None
        if len(data) > MAX_READ_BYTES or b"\0" in data[:8192]:
            return None
        return data


@dataclass
class ProbeOutput:
    """Values for the keys a probe declared, plus its diagnostics."""

    values: dict[str, Any] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)


class Probe:
    name: ClassVar[str]
    version: ClassVar[str]
    applies_to_tasks: ClassVar[tuple[str, ...]] = ("*",)
    inputs: ClassVar[tuple[str, ...]] = ()  # globs over the file index
    produces: ClassVar[tuple[str, ...]] = ()  # dotted RepoContext keys
    requires: ClassVar[tuple[str, ...]] = ()  # upstream keys it reads from ctx.upstream
    options: ClassVar[tuple[str, ...]] = ()  # gather options that change its output

    def run(self, ctx: ProbeContext) -> ProbeOutput:  # pragma: no cover - interface
        raise NotImplementedError

    def extra_fingerprint(self, ctx: ProbeContext) -> str:
        """Anything besides input files and options that changes the output (e.g. an advisory DB)."""
        return ""

    def start(self, ctx: ProbeContext, cache: Mapping[str, Any], nice: int = 0) -> Started | None:
        """Begin the costly part of this probe's run in forked workers, when it has such a part that depends on
        no upstream key and forking pays (parallel.start_map); `run` takes the results (ctx.started). The
        gather calls it for each probe that will run, before the first one runs, so the workers use the
        cores the serial probes leave idle. `cache`: the probe's cache slot (PerFileProbes); `nice`: the
        workers' added niceness (see start_map). None: nothing started."""
        return None

    def warm(self, ctx: ProbeContext) -> None:
        """Load what the run will need (an index, modules), in this process, while the started work runs: the
        gather calls it after every probe's `start`. Nothing by default."""

    def fingerprint(self, ctx: ProbeContext, upstream_fingerprints: Mapping[str, str]) -> str:
        """A hash of everything the output depends on; equal hash ⇒ the old output is reused."""
        digest = hashlib.sha256(f"{self.name}\0{self.version}\0{RULES_DIGEST}\0".encode())
        records = ctx.matching(self.inputs) if self.inputs else ()
        digest.update("".join([f"{record.path}\0{record.sha}\0" for record in records]).encode())
        for key in self.options:
            digest.update(f"opt:{key}={ctx.options.get(key, '')}\0".encode())
        for key in self.requires:
            digest.update(f"req:{key}={upstream_fingerprints.get(key, '')}\0".encode())
        digest.update(self._extra(ctx).encode())
        return digest.hexdigest()

    def _extra(self, ctx: ProbeContext) -> str:
        """extra_fingerprint, computed once per gather (it may parse files: the containers probe's does)."""
        key = f"extra:{self.name}"
        if key not in ctx.memo:
            ctx.memo[key] = self.extra_fingerprint(ctx)
        return str(ctx.memo[key])

    def settings_fingerprint(self, ctx: ProbeContext) -> str:
        """The part of `fingerprint` that is neither input files nor upstream keys (name, version, options,
        extra): an incremental combine is only valid while it is unchanged."""
        digest = hashlib.sha256(f"{self.name}\0{self.version}\0{RULES_DIGEST}\0".encode())
        for key in self.options:
            digest.update(f"opt:{key}={ctx.options.get(key, '')}\0".encode())
        digest.update(self._extra(ctx).encode())
        return digest.hexdigest()

    def diagnostic(self, message: str, file: str | None = None, line: int | None = None,
                   level: DiagnosticLevel = "warning") -> Diagnostic:
        return Diagnostic(probe=self.name, level=level, message=message, file=file, line=line)


class PerFileProbe(Probe):
    """A probe whose work is per file: `analyze` each input file, then `combine`.

    `analyze` must depend only on the file's path and content (not on other
    files or upstream keys — use those in `combine`), so its result can be
    cached by (path, blob id): an incremental gather then analyses only the
    files that changed.
    """

    def analyze(self, ctx: ProbeContext, record: FileRecord) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def combine(self, ctx: ProbeContext, results: dict[str, Any]) -> ProbeOutput:  # pragma: no cover - interface
        raise NotImplementedError

    def content_class(self, path: str) -> str | None:
        """What of `path` besides the file's content `analyze` depends on (e.g. its language), when that is
        all: files with equal blob ids and equal classes then share one analysis. None: never share."""
        return None

    # Upstream keys that may have changed since `previous` when run_incremental is called, provided their
    # producer was itself reused or updated by run_incremental in this gather; every other key in `requires`
    # must be unchanged (equal fingerprint or equal value).
    incremental_upstream: ClassVar[tuple[str, ...]] = ()

    # Probes whose per-file results this one's `analyze` reuses when they ran earlier in the same gather (see
    # ProbeContext.analysed): while one of them is to run, this probe's analyses are not started early.
    analyses_reused_from: ClassVar[tuple[str, ...]] = ()

    # What `analyze` costs, to decide whether forking workers pays: measured for the call-site scanners (a
    # Django site's 575 source files, 1.9 MB: 0.27 s to read, parse and visit in one process).
    SECONDS_PER_FILE: ClassVar[float] = 5e-5
    SECONDS_PER_BYTE: ClassVar[float] = 1.4e-7

    def prepare(self, batch: Sequence[FileRecord]) -> None:
        """Load what analysing `batch` needs once per process (a grammar, a compiled query), before workers
        fork: each would otherwise load it for itself. Nothing by default."""

    def analysis_is_cheap(self, ctx: ProbeContext) -> bool:
        """Whether `analyze` costs little per file here: then files are analysed in this process, as
        forking workers and sending results back would cost more than it saves."""
        return False

    @property
    def slot(self) -> str:
        """The probe cache's slot: results of files read under other secret rules (unredacted) never return."""
        return f"{self.name}@{self.version}+{RULES_DIGEST}"

    def run(self, ctx: ProbeContext) -> ProbeOutput:
        return self.run_cached(ctx, {})[0]

    def run_cached(self, ctx: ProbeContext, cache: Mapping[str, Any]) -> tuple[ProbeOutput, dict[str, Any]]:
        """Run, reusing `cache` ("path\\0sha" → result); returns the output and the new cache.

        Files not in the cache are analysed once per distinct (blob, content class), in `ctx.workers`
        processes when there are many of them, or taken from the analyses `start_analyses` began.
        """
        plan = self.plan(ctx, cache)
        started = take_started(ctx, self.name, list(plan.todo))
        done = (started or self.start_analyses(ctx, plan)).result()
        analysed = dict(zip(plan.todo, done, strict=True))
        fresh: dict[str, Any] = {}
        results: dict[str, Any] = {}
        for record, key in zip(plan.records, plan.keys, strict=True):
            result = cache[key] if key in cache else analysed[plan.shared[key]]
            fresh[key] = result
            results[record.path] = result
        ctx.analysed[self.name] = fresh
        return self.combine(ctx, results), fresh

    def plan(self, ctx: ProbeContext, cache: Mapping[str, Any]) -> Analyses:
        """The input files, and which of them need analysing: those not in `cache`, one per (blob, class)."""
        records = ctx.matching(self.inputs)
        keys = [f"{record.path}\0{record.sha}" for record in records]
        todo: dict[str, FileRecord] = {}  # analysis key → the first record needing it
        shared: dict[str, str] = {}  # cache key → analysis key, for the records not in the cache
        for record, key in zip(records, keys, strict=True):
            if key not in cache:
                content = self.content_class(record.path)
                shared[key] = key if content is None or path_rule(record.path) else f"\0{content}\0{record.sha}"
                todo.setdefault(shared[key], record)
        return Analyses(records, keys, todo, shared)

    def start(self, ctx: ProbeContext, cache: Mapping[str, Any], nice: int = 0) -> Started | None:
        """The analyses of the files not in `cache`, when forking workers for them pays."""
        plan = self.plan(ctx, cache)
        pending = self.start_analyses(ctx, plan, nice)
        return Started(list(plan.todo), pending) if pending.forked else None

    def start_analyses(self, ctx: ProbeContext, plan: Analyses, nice: int = 0) -> parallel.Pending:
        """`analyze` over the plan's files to do, started (see parallel.start_map)."""
        workers = 1 if self.analysis_is_cheap(ctx) else ctx.workers
        batch = list(plan.todo.values())
        self.prepare(batch)
        return parallel.start_map(lambda record: self.analyze(ctx, record), batch, workers, self.costs(batch), nice)

    def costs(self, batch: Sequence[FileRecord]) -> list[float]:
        """Each file's estimated analysis time, from the measured rates."""
        return [self.SECONDS_PER_FILE + record.size * self.SECONDS_PER_BYTE for record in batch]

    def run_incremental(self, ctx: ProbeContext, previous: Mapping[str, Any], changes: Mapping[str, tuple[Any, Any]],
                        previous_diagnostics: Sequence[Diagnostic] = (),
                        result_of: Callable[[str], Any] | None = None) -> ProbeOutput | None:
        """The output `combine` would give over all files, worked out from the previous output and the changed
        files only; None when that cannot be guaranteed (the caller then runs `run_cached`).

        Call it only when `settings_fingerprint` is unchanged since `previous` and each key in `requires` is
        unchanged or listed in `incremental_upstream` (see there); `ctx.upstream` holds the current values.
        `previous`: each key in `produces` → its previous value; read-only, read through the Mapping and
        Sequence protocols only (sequences must accept slices). `changes`: every input path whose (path, sha)
        changed → (old result, new result), ABSENT for a file added or removed (see `prepare_incremental`).
        `previous_diagnostics`: this probe's diagnostics in the previous snapshot. `result_of(path)`: the
        result of an unchanged input file (its cached result; may raise KeyError, then it is analysed again).
        Parts of `previous` that no change touches are returned as the same objects.
        """
        return None

    def prepare_incremental(self, ctx: ProbeContext, diff: Mapping[str, tuple[str | None, str | None]],
                            old_result: Callable[[str, str], Any],
                            ) -> tuple[dict[str, tuple[Any, Any]], dict[str, Any]] | None:
        """`changes` for run_incremental from an `index_diff`, and the new per-file results ("path\\0sha" → result,
        to add to the cache). Changed input files are analysed here (in this process: they are few);
        `old_result(path, sha)` is the cached result of the previous version and raises KeyError when there is
        none: then None (the caller runs the full path). Also records the new results in `ctx.analysed`, as
        `run_cached` does, so a later probe can reuse them."""
        matchers = [globs.matcher(pattern) for pattern in self.inputs]
        changes: dict[str, tuple[Any, Any]] = {}
        fresh: dict[str, Any] = {}
        for path, (old_sha, new_sha) in sorted(diff.items()):
            if not any(m.match(path) for m in matchers):
                continue
            try:
                old = ABSENT if old_sha is None else old_result(path, old_sha)
            except KeyError:
                return None
            record = ctx.record(path) if new_sha is not None else None
            new = ABSENT if record is None else self.analyze(ctx, record)
            if record is not None:
                fresh[f"{path}\0{record.sha}"] = new
            changes[path] = (old, new)
        ctx.analysed[self.name] = fresh
        return changes, fresh

    def result_for(self, ctx: ProbeContext, path: str, result_of: Callable[[str], Any] | None) -> Any:
        """The result of an unchanged input file: from `result_of`, else (no lookup, or a miss) analysed now."""
        if result_of is not None:
            try:
                return result_of(path)
            except KeyError:
                pass
        record = ctx.record(path)
        if record is None:
            raise CannotIncrement(f"{path} is not indexed")
        return self.analyze(ctx, record)
