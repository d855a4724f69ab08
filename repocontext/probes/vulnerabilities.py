"""Known vulnerabilities of the repository's dependencies, from OSV advisories.

The advisory source is the gather option `advisories`: a directory of OSV files, an
osv.dev zip export or a scanner report (osv-scanner / pip-audit JSON); several can be
joined with `os.pathsep`. Relative paths are taken from the current directory. The
source is operator-supplied data outside the repository, so it is read directly, not
through `ctx.read_text`.

Output keys: the advisory id when that advisory hits one (ecosystem, package, version)
of the repository; when it hits several (e.g. two locked versions of one package),
each finding is keyed `ID/package@version` so none is lost. Keys are sorted. One
finding lists every declaration ("path:line") of the same package version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from repocontext.model import Diagnostic, Finding, FixChoice
from repocontext.probe import Probe, ProbeContext, ProbeOutput

if TYPE_CHECKING:  # the advisory machinery is imported only when advisories are given (start-up cost)
    from repocontext.osv.db import AdvisoryDB
    from repocontext.osv.evaluate import Evaluation
    from repocontext.osv.schema import Advisory

OPTION = "advisories"
MAX_LOAD_ISSUES = 20  # diagnostics for a broken advisory source; the rest are counted
_CACHE: dict[str, tuple[str, AdvisoryDB]] = {}  # source option -> (fingerprint, db): re-gathers skip reloading


@dataclass
class _Hit:
    advisory: Advisory
    evaluation: Evaluation
    direct: bool = False
    files: set[str] = field(default_factory=set)


class VulnerabilitiesProbe(Probe):
    name = "vulnerabilities"
    version = "3"
    applies_to_tasks = ("vulnerability-remediation",)
    inputs = ()
    produces = ("vulnerabilities",)
    requires = ("dependencies",)
    options = (OPTION,)

    def extra_fingerprint(self, ctx: ProbeContext) -> str:
        source = ctx.options.get(OPTION, "").strip()
        return f"advisories:{_stamp(ctx, source)}" if source else ""

    def warm(self, ctx: ProbeContext) -> None:
        """The advisory index opened and the machinery the run uses imported while the lockfiles are parsed
        (the run needs the dependencies)."""
        source = ctx.options.get(OPTION, "").strip()
        if source:
            _load_cached(source, _stamp(ctx, source))
            import repocontext.osv.remedy
            import repocontext.osv.scope  # noqa: F401

    def run(self, ctx: ProbeContext) -> ProbeOutput:
        source = ctx.options.get(OPTION, "").strip()
        if not source:
            return ProbeOutput(values={"vulnerabilities": {}}, diagnostics=[self.diagnostic(
                "no advisory source given (gather option 'advisories'); vulnerabilities not evaluated", level="info")])
        db = _load_cached(source, _stamp(ctx, source))
        diagnostics = self._load_diagnostics(db)
        dependencies = ctx.upstream.get("dependencies")
        if not isinstance(dependencies, Mapping):
            diagnostics.append(self.diagnostic("no dependencies section to evaluate", level="info"))
            return ProbeOutput(values={"vulnerabilities": {}}, diagnostics=diagnostics)
        hits = self._evaluate(db, dependencies, diagnostics)
        return ProbeOutput(values={"vulnerabilities": _findings(hits, db)}, diagnostics=_unique(diagnostics))

    def _load_diagnostics(self, db: AdvisoryDB) -> list[Diagnostic]:
        found = [self.diagnostic(f"advisory source {i.source}: {i.reason}") for i in db.issues[:MAX_LOAD_ISSUES]]
        if len(db.issues) > MAX_LOAD_ISSUES:
            found.append(self.diagnostic(f"{len(db.issues) - MAX_LOAD_ISSUES} more advisory source problems"))
        if not len(db):
            found.append(self.diagnostic("the advisory source holds no advisories"))
        return found

    def _evaluate(self, db: AdvisoryDB, dependencies: Mapping[str, Any],
                  diagnostics: list[Diagnostic]) -> dict[tuple[str, str, str, str], _Hit]:
        hits: dict[tuple[str, str, str, str], _Hit] = {}
        # One evaluation per package version: a monorepo's lockfiles repeat the same ones thousands of times.
        evaluated: dict[tuple[str, str, str], list[Evaluation]] = {}
        for dep in _concrete(dependencies):
            ecosystem, package, version = dep["ecosystem"], dep["name"], dep["version"]
            orderable = self._check_version(ecosystem, package, version, dep, diagnostics)
            key = (ecosystem, package, version)
            if key not in evaluated:
                evaluated[key] = db.evaluate(ecosystem, package, version)
            for evaluation in evaluated[key]:
                diagnostics.extend(self._notes(evaluation, dep, orderable))
                advisory = db.get(evaluation.advisory_id)
                if not evaluation.affected or advisory is None:
                    continue
                hit = hits.setdefault((advisory.id, ecosystem, package, version), _Hit(advisory, evaluation))
                hit.direct = hit.direct or bool(dep.get("direct", True))
                hit.files.add(_declaration(dep))
        return hits

    def _check_version(self, ecosystem: str, package: str, version: str, dep: Mapping[str, Any],
                       diagnostics: list[Diagnostic]) -> bool:
        problem = _version_problem(ecosystem, version)
        if problem is not None:
            diagnostics.append(self.diagnostic(
                f"{package} {version}: {problem}; only advisories' explicit version lists were checked", *_where(dep)))
            return False
        return True

    def _notes(self, evaluation: Evaluation, dep: Mapping[str, Any], orderable: bool) -> list[Diagnostic]:
        """Problems worth a diagnostic: an advisory we could not evaluate at all, or one with broken versions."""
        subject = f"{evaluation.package} {evaluation.version}"
        if evaluation.withdrawn:
            return []
        if not evaluation.checked and orderable:
            return [self.diagnostic(f"{subject}: {evaluation.advisory_id} could not be evaluated: "
                                    + "; ".join(evaluation.notes), *_where(dep), level="info")]
        skipped = [n for n in evaluation.notes if "range skipped: invalid" in n] if orderable else []
        return [self.diagnostic(f"{subject}: {note}", *_where(dep)) for note in skipped]


@lru_cache(maxsize=1 << 14)
def _version_problem(ecosystem: str, version: str) -> str | None:
    """Why `version` cannot be ordered in `ecosystem`'s scheme, or None (asked once per version, not once per
    lockfile record)."""
    from repocontext.osv.versions import InvalidVersion, scheme_for, sort_key

    try:
        sort_key(scheme_for(ecosystem), version)
    except InvalidVersion as exc:
        return str(exc)
    return None


def _concrete(dependencies: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Dependency dicts with a concrete version, in a stable order (by section key, then as listed)."""
    found: list[dict[str, Any]] = []
    for key in sorted(dependencies):
        entries = dependencies[key]
        for dep in entries if isinstance(entries, list) else []:
            dep = dep.model_dump() if hasattr(dep, "model_dump") else dep
            if not isinstance(dep, Mapping):
                continue
            ecosystem, version = _text(dep.get("ecosystem")), _text(dep.get("version"))
            if not version or not ecosystem:
                continue  # a range or a malformed entry: nothing to evaluate
            name = _text(dep.get("name")) or key
            # str.strip returns the very string when there is nothing to strip: then the record is as wanted.
            clean = ecosystem is dep["ecosystem"] and version is dep["version"] and name is dep.get("name")
            found.append(dep if clean and type(dep) is dict else
                         {**dep, "ecosystem": ecosystem, "name": name, "version": version})
    return found


def _stamp(ctx: ProbeContext, source: str) -> str:
    """The source's fingerprint, walked once per gather: the probe's own fingerprint and its run both need
    it, and a snapshot has thousands of files to stat. A later gather walks it again (it may have changed)."""
    key = f"advisories-fingerprint:{source}"
    if key not in ctx.memo:
        from repocontext.osv.load import fingerprint

        ctx.memo[key] = fingerprint(source)
    return str(ctx.memo[key])


def _load_cached(source: str, stamp: str) -> AdvisoryDB:
    cached = _CACHE.get(source)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    from repocontext.osv.index import open_db

    db = open_db(source, stamp)  # the compiled index: parsed once, opened by every later process
    if len(_CACHE) >= 4:
        _CACHE.clear()
    _CACHE[source] = (stamp, db)
    return db


def _fix_choice(db: AdvisoryDB, ecosystem: str, package: str, version: str) -> FixChoice:
    from repocontext.osv.remedy import choose_remedy

    remedy = choose_remedy(db.for_package(ecosystem, package), ecosystem, package, version)
    # The conclusion only: each finding carries its own ranges, and the package's findings at this version
    # are the advisories the choice clears; repeating them in every finding grew a package's slice as N².
    return FixChoice(version=remedy.version, same_line=remedy.same_line, reason=remedy.conclusion,
                     unfixed=remedy.unfixed or None)


def _findings(hits: dict[tuple[str, str, str, str], _Hit], db: AdvisoryDB) -> dict[str, dict[str, Any]]:
    per_id: dict[str, int] = {}
    for advisory_id, *_ in hits:
        per_id[advisory_id] = per_id.get(advisory_id, 0) + 1
    findings: dict[str, dict[str, Any]] = {}
    choices: dict[tuple[str, str, str], FixChoice] = {}
    for (advisory_id, ecosystem, package, version), hit in hits.items():
        choice = choices.get((ecosystem, package, version))
        if choice is None:
            choice = choices[(ecosystem, package, version)] = _fix_choice(db, ecosystem, package, version)
        key = advisory_id if per_id[advisory_id] == 1 else f"{advisory_id}/{package}@{version}"
        if key in findings:  # the same package@version in two ecosystems: keep both
            key = f"{advisory_id}/{ecosystem}/{package}@{version}"
        findings[key] = _finding(hit, ecosystem, package, version).model_copy(update={"remedy": choice}).model_dump()
    return dict(sorted(findings.items()))


def _finding(hit: _Hit, ecosystem: str, package: str, version: str) -> Finding:
    from repocontext.osv.scope import vulnerable_symbols

    ev, advisory = hit.evaluation, hit.advisory
    return Finding(
        id=advisory.id, aliases=sorted(set(advisory.aliases)), package=package, ecosystem=ecosystem,
        installed_version=version, fixed=ev.fixed, severity=ev.severity.label or ev.severity.cvss,
        summary=_summary(advisory), direct=hit.direct, files=sorted(hit.files), cvss=ev.severity.cvss,
        score=ev.severity.score, affected_ranges=[i.describe() for i in ev.intervals], all_fixed=ev.all_fixed,
        vulnerable_symbols=vulnerable_symbols(advisory, ecosystem, package) or None,
    )


def _summary(advisory: Advisory, limit: int = 200) -> str | None:
    """The record's summary, else the first line of its details (pypa records have no summary)."""
    text = (advisory.summary or advisory.details or "").strip()
    if not text:
        return None
    first = " ".join(text.splitlines()[0].split()) if advisory.summary else " ".join(text.split())
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def _declaration(dep: Mapping[str, Any]) -> str:
    file, line = _text(dep.get("file")) or "?", dep.get("line")
    return f"{file}:{line}" if isinstance(line, int) else file


def _where(dep: Mapping[str, Any]) -> tuple[str | None, int | None]:
    line = dep.get("line")
    return _text(dep.get("file")) or None, line if isinstance(line, int) else None


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _unique(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    seen: dict[str, Diagnostic] = {}
    for diagnostic in diagnostics:
        seen.setdefault(diagnostic.model_dump_json(), diagnostic)
    return list(seen.values())
