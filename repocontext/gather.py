"""Gathering: index the files, run every probe, assemble a RepoContext.

Incremental by construction: each probe's fingerprint covers its version, the
content hashes of its input files, its options and its upstream keys; when the
fingerprint matches the previous snapshot's, the previous values are reused
instead of running the probe again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from repocontext import budget, parallel, secrets_scan
from repocontext.index import FileIndex, build_index
from repocontext.model import Denied, Diagnostic, FileRecord, Meta, ProbeRun, RepoContext
from repocontext.paths import repo_id
from repocontext.probe import PerFileProbe, Probe, ProbeContext
from repocontext.probes import ALL_PROBES
from repocontext.secrets import RULES_DIGEST
from repocontext.sections import validate as validate_section

Progress = Callable[[str, int, int], None]  # (step, done, total)
# The niceness of the workers started early for any probe but the first to start (see start_early): the
# lowest priority, so they take only the cores the first one's workers and this process leave. Measured on
# docker/awesome-compose (lockfiles first, then call sites and containers): 0.89 s with all alike, 0.85 s at
# nice 5, 0.82 s at 19.
LATER_NICE = 19


class GatherError(RuntimeError):
    pass


def get_path(data: Mapping[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def set_path(data: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    node = data
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def check_repo(path: Path) -> Path:
    """The resolved repository root, or a GatherError naming what is wrong."""
    if not path.exists():
        raise GatherError(f"repository {path} does not exist")
    if not path.is_dir():
        raise GatherError(f"repository {path} is not a directory")
    return path.resolve()


def gather(
    path: Path,
    *,
    previous: Mapping[str, Any] | None = None,
    options: Mapping[str, str] | None = None,
    probes: Sequence[Probe] = ALL_PROBES,
    progress: Progress | None = None,
    cache: dict[str, dict[str, Any]] | None = None,
    workers: int | None = None,
) -> RepoContext:
    """Make a RepoContext for the repository at `path`.

    `previous` is an earlier snapshot of the same repository (plain JSON); probes
    whose inputs are unchanged since then are not re-run. `cache` holds
    per-file results of PerFileProbes by probe name ("name@version"); it is
    updated in place, so the caller can persist it for the next gather.
    `workers` caps the processes used for files not in the cache (default:
    `parallel.default_workers()`); the result never depends on it.
    """
    root = check_repo(path)
    with parallel.gc_paused():
        return _gather(root, previous, dict(options or {}), probes, progress, cache,
                       parallel.default_workers() if workers is None else workers)


def _gather(root: Path, previous: Mapping[str, Any] | None, options: dict[str, str], probes: Sequence[Probe],
            progress: Progress | None, cache: dict[str, dict[str, Any]] | None, workers: int) -> RepoContext:
    total = len(probes) + 1
    if progress:
        progress("files", 0, total)
    previous_files = {f["path"]: f["sha"] for f in (previous or {}).get("files", [])} if same_rules(previous) else {}
    index, files, denied = scan_tree(root, previous_files, workers=workers)
    # Probes see plain JSON upstream; the model gets the records themselves (see _assemble).
    data: dict[str, Any] = {
        "files": [{"path": f.path, "size": f.size, "sha": f.sha, "language": f.language} for f in files],
        "denied": [{"path": d.path, "rule": d.rule} for d in denied],
    }
    diagnostics: list[Diagnostic] = list(index.diagnostics)
    runs: dict[str, ProbeRun] = {}
    key_fingerprints: dict[str, str] = {}
    previous_runs = (previous or {}).get("meta", {}).get("probes", {})
    ctx = ProbeContext(root=root, files=files, options=options, upstream=data, workers=workers)
    # Which probes reuse their previous output is known before any runs (a fingerprint covers inputs, never
    # outputs), so the per-file analyses of the others can start at once. A first gather runs every probe
    # and fingerprints each after its run, when what it worked out (the containers probe's parses) serves.
    fingerprints = _fingerprints(probes, ctx) if previous is not None else {}
    fresh = [probe for probe in probes if not _reusable(previous_runs.get(probe.name), fingerprints.get(probe.name))]
    try:
        start_early(ctx, fresh, cache)
        for done, probe in enumerate(probes, start=1):
            if progress:
                progress(probe.name, done, total)
            if probe in fresh:
                found = run_probe(probe, ctx, data, cache)
                diagnostics.extend(found)
                fingerprint = fingerprints.get(probe.name) or probe.fingerprint(ctx, key_fingerprints)
                runs[probe.name] = probe_run(probe, ctx, fingerprint, reusable=not budget.exceeded(found))
            else:
                fingerprint = fingerprints[probe.name]
                diagnostics.extend(carry(probe, previous or {}, data))
                runs[probe.name] = probe_run(probe, ctx, fingerprint, reused=True)
            for key in probe.produces:
                key_fingerprints[key] = fingerprint
    finally:
        for started in ctx.started.values():
            started.pending.cancel()
    if progress:
        progress("done", total, total)
    indexed: dict[str, tuple[Any, list[Any]]] = {"files": (data["files"], files), "denied": (data["denied"], denied)}
    return _assemble(data, indexed, diagnostics, snapshot_meta(root, index, runs))


def _fingerprints(probes: Sequence[Probe], ctx: ProbeContext) -> dict[str, str]:
    """Each probe's fingerprint, in order (a probe's covers those of the keys it requires)."""
    found: dict[str, str] = {}
    by_key: dict[str, str] = {}
    for probe in probes:
        found[probe.name] = probe.fingerprint(ctx, by_key)
        by_key.update(dict.fromkeys(probe.produces, found[probe.name]))
    return found


def _reusable(old: Mapping[str, Any] | None, fingerprint: str | None) -> bool:
    """Whether a probe's previous run (its meta record) stands: its inputs hash is this gather's fingerprint."""
    if not old:
        return False
    return fingerprint is not None and old.get("inputs_hash") == fingerprint


def start_early(ctx: ProbeContext, probes: Sequence[Probe], cache: dict[str, dict[str, Any]] | None) -> None:
    """Begin the costly work of the probes that will run (their per-file analyses, the lockfiles' parses) in
    forked workers, where that pays (see Probe.start): it runs while this process runs the probes before
    them, and each probe takes its results at its turn (ctx.started). Probes need their results in probe
    order: the first probe's workers run at this process's priority, and those of the later ones at the
    lowest (LATER_NICE), so the work needed first gets the cores first. Then each probe loads what its run
    needs (Probe.warm) while the workers run."""
    names = {probe.name for probe in probes}
    for probe in probes:
        if isinstance(probe, PerFileProbe) and not names.isdisjoint(probe.analyses_reused_from):
            continue  # it will reuse what an earlier probe analyses
        slot = cache.get(probe.slot, {}) if cache is not None and isinstance(probe, PerFileProbe) else {}
        try:
            started = probe.start(ctx, slot, LATER_NICE if ctx.started else 0)
        except Exception:  # noqa: BLE001 - its run meets the same problem and reports it as its own
            continue
        if started is not None:
            ctx.started[probe.name] = started
    for probe in probes:  # after every fork: the workers run meanwhile
        try:
            probe.warm(ctx)
        except Exception:  # noqa: BLE001 - as above
            continue


def scan_tree(root: Path, previous_shas: Mapping[str, str], known: Mapping[str, Mapping[str, Any]] | None = None,
              workers: int = 1) -> tuple[FileIndex, list[FileRecord], list[Denied]]:
    """(index, files, denied): the file index with secret-looking files moved to the denials; files whose blob
    is the one in `previous_shas` are not read again (`known`: see build_index; `workers`: processes that
    may read the files)."""
    index = build_index(root, known)
    files, content_denied = secrets_scan.scan(root, index.files, previous_shas, workers)
    return index, files, sorted([*index.denied, *content_denied], key=lambda d: d.path)


def previous_diagnostics(previous: Mapping[str, Any], probe: Probe) -> list[Diagnostic]:
    return [Diagnostic.model_validate(d) for d in previous.get("diagnostics", [])
            if isinstance(d, Mapping) and d.get("probe") == probe.name]


def carry(probe: Probe, previous: Mapping[str, Any], data: dict[str, Any]) -> list[Diagnostic]:
    """Reuse a probe's previous output (its inputs are unchanged): its keys' values; returns its diagnostics."""
    for key in probe.produces:
        set_path(data, key, get_path(previous, key))
    return previous_diagnostics(previous, probe)


def snapshot_meta(root: Path, index: FileIndex, runs: dict[str, ProbeRun]) -> Meta:
    return Meta(repo_id=repo_id(root), root=str(root), commit=index.commit, dirty=index.dirty,
                gathered_at=datetime.now(UTC).isoformat(timespec="seconds"), probes=runs,
                secret_rules=RULES_DIGEST)


def same_rules(previous: Mapping[str, Any] | None) -> bool:
    """Whether `previous` (a snapshot's JSON) was scanned with the secret rules in force now: its clean and
    denied verdicts are reusable only then."""
    meta = (previous or {}).get("meta")
    return isinstance(meta, Mapping) and meta.get("secret_rules") == RULES_DIGEST


def _assemble(data: dict[str, Any], indexed: dict[str, tuple[Any, list[Any]]], diagnostics: list[Diagnostic],
              meta: Meta) -> RepoContext:
    """The RepoContext, validating only the probe-made sections: the file index and denials (`indexed`:
    key → (the upstream JSON, the models)), diagnostics and meta are models already, so validating the
    whole snapshot again would only repeat work."""
    kept: dict[str, Any] = {key: models for key, (upstream, models) in indexed.items() if data.get(key) is upstream}
    # "meta" and "diagnostics" are always the gather's own; a probe that replaced "files" gets validated.
    sections = {key: value for key, value in data.items() if key not in (*kept, "meta", "diagnostics")}
    if not set(sections) <= set(RepoContext.model_fields):  # an undeclared section: fail as validation does
        return RepoContext.model_validate({**data, "diagnostics": [d.model_dump() for d in diagnostics],
                                           "meta": meta.model_dump()})
    values = {key: validate_section(key, value) for key, value in sections.items()}
    return RepoContext.model_construct(**kept, **values, meta=meta, diagnostics=diagnostics)


def probe_run(probe: Probe, ctx: ProbeContext, fingerprint: str, reused: bool = False,
              reusable: bool = True) -> ProbeRun:
    """The run's record; an unreusable one (cut short by the time budget) gets an inputs hash that no later
    fingerprint equals, so the next gather runs the probe again."""
    return ProbeRun(version=probe.version, inputs_hash=fingerprint if reusable else "",
                    settings_hash=probe.settings_fingerprint(ctx), reused=reused)


def run_probe(probe: Probe, ctx: ProbeContext, data: dict[str, Any],
              cache: dict[str, dict[str, Any]] | None) -> list[Diagnostic]:
    """Run one probe; a probe that crashes, or overruns the opt-in time budget (repocontext.budget), costs only
    its own keys, never the gather."""
    try:
        with budget.time_budget(budget.seconds()):
            if isinstance(probe, PerFileProbe) and cache is not None:
                slot = probe.slot
                output, cache[slot] = probe.run_cached(ctx, cache.get(slot, {}))
            else:
                output = probe.run(ctx)
    except budget.OverBudget as exc:
        return [Diagnostic(probe=probe.name, level="error", message=f"{exc}; its keys are left out")]
    except Exception as exc:  # noqa: BLE001 - a probe bug must not sink the gather
        return [Diagnostic(probe=probe.name, level="error", message=f"probe failed: {exc.__class__.__name__}: {exc}")]
    unexpected = set(output.values) - set(probe.produces)
    if unexpected:
        return [Diagnostic(probe=probe.name, level="error",
                           message=f"probe produced undeclared keys {sorted(unexpected)}; output dropped")]
    for key, value in output.values.items():
        set_path(data, key, value)
    return output.diagnostics
