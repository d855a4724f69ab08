"""Choosing the version to upgrade one package to, from the advisories that name it.

Offline we cannot list a registry's releases, so the candidates are the `fixed`
versions the records name (a `last_affected` bound has no known successor). Each
candidate above the installed version is checked against every given advisory; the
lowest unaffected one in the installed version's release line (major.minor for
PyPI, major for SemVer and generic orderings) is preferred, else the lowest
unaffected one overall. Pre-releases are only chosen when nothing final qualifies
(or the installed version is itself a pre-release).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from repocontext.osv.evaluate import Evaluation, affects, evaluate
from repocontext.osv.schema import Advisory
from repocontext.osv.versions import InvalidVersion, Scheme, is_prerelease, release_line, scheme_for, sort_key


class AdvisoryHit(BaseModel):
    id: str
    intervals: list[str] = Field(default_factory=list)  # e.g. ">=3.2, <3.2.20"
    fixed: list[str] = Field(default_factory=list)  # the containing intervals' fixes


class RejectedCandidate(BaseModel):
    version: str
    reason: str


class Remedy(BaseModel):
    ecosystem: str
    package: str
    installed: str
    version: str | None = None  # the version to move to; None when not affected or no fix is known
    same_line: bool = False  # the chosen version is in the installed version's release line
    no_fix: bool = False  # affected, and no named fixed version clears every advisory
    affected_by: list[AdvisoryHit] = Field(default_factory=list)
    rejected: list[RejectedCandidate] = Field(default_factory=list)  # candidates below the choice, and why
    unfixed: list[str] = Field(default_factory=list)  # affecting advisories that name no fix at all: left over
    reason: str = ""  # which advisories affect the installed version, then the conclusion
    conclusion: str = ""  # the conclusion alone (the findings carry the per-advisory ranges)


def choose_remedy(advisories: Sequence[Advisory], ecosystem: str, package: str, installed: str) -> Remedy:
    remedy = Remedy(ecosystem=ecosystem, package=package, installed=installed)
    evaluations = _evaluations(advisories, ecosystem, package, installed)
    hits = [e for e in evaluations if e.affected]
    remedy.affected_by = [_hit(e) for e in hits]
    if not hits:
        remedy.reason = f"{installed} is not affected by any of the {len(evaluations)} advisories naming {package}"
        return remedy
    scheme = scheme_for(ecosystem)
    try:
        floor = sort_key(scheme, installed)
    except InvalidVersion as exc:
        remedy.no_fix = True
        remedy.reason = f"cannot order the installed version: {exc}"
        return remedy
    # An advisory whose interval around the installed version never closes (introduced 0, no fix: an
    # unmaintained subpackage) is cleared by no upgrade: choose against the others, and say it remains.
    remedy.unfixed = [e.advisory_id for e in hits if _open_ended(e)]
    if remedy.unfixed:
        advisories = [a for a in advisories if a.id not in remedy.unfixed]
        evaluations = [e for e in evaluations if e.advisory_id not in remedy.unfixed]
    candidates = _candidates(scheme, evaluations, floor)
    line = release_line(scheme, installed)
    verdicts = _verdicts(advisories, ecosystem, package, candidates, scheme, installed, line)
    good = [c for c in verdicts if verdicts[c] is None]
    if not _is_pre(scheme, installed) and any(not _is_pre(scheme, c) for c in good):
        for c in good:
            if _is_pre(scheme, c):
                verdicts[c] = "a pre-release, and a final release also qualifies"
        good = [c for c in good if verdicts[c] is None]
    same = [c for c in good if release_line(scheme, c) == line]
    chosen = same[0] if same else good[0] if good else None
    remedy.version, remedy.same_line, remedy.no_fix = chosen, bool(same), chosen is None
    below = candidates if chosen is None else candidates[: candidates.index(chosen)]
    remedy.rejected = [RejectedCandidate(version=c, reason=verdicts[c] or "not chosen") for c in below]
    remedy.conclusion = _conclude(remedy, candidates, line)
    found = "; ".join(f"{h.advisory_id} affects {remedy.installed} in {', '.join(_hit(h).intervals)}" for h in hits)
    remedy.reason = f"{found}; {remedy.conclusion}"
    return remedy


def _open_ended(evaluation: Evaluation) -> bool:
    return bool(evaluation.intervals) and all(i.fixed is None and i.last_affected is None
                                              for i in evaluation.intervals)


def _verdicts(advisories: Sequence[Advisory], ecosystem: str, package: str, candidates: list[str], scheme: Scheme,
              installed: str, line: tuple[int, ...]) -> dict[str, str | None]:
    """Each candidate's blocker, in ascending order, up to the first that will be chosen for certain: unblocked,
    in the installed release line, and final (or the installed version is a pre-release too). Candidates above
    it are never reported (only those below the choice are), and judging each one evaluates every advisory of
    the package: a package with a hundred advisories and fixes made this most of a gather."""
    eligible_pre = _is_pre(scheme, installed)
    verdicts: dict[str, str | None] = {}
    for candidate in candidates:
        verdicts[candidate] = verdict = _blocker(advisories, ecosystem, package, candidate)
        if verdict is None and release_line(scheme, candidate) == line and (
                eligible_pre or not _is_pre(scheme, candidate)):
            break
    return verdicts


def _evaluations(advisories: Sequence[Advisory], ecosystem: str, package: str, version: str) -> list[Evaluation]:
    results = (evaluate(a, ecosystem, package, version) for a in advisories)
    return [r for r in results if r is not None and not r.withdrawn]


def _hit(evaluation: Evaluation) -> AdvisoryHit:
    intervals = [i.describe() for i in evaluation.intervals] or ["listed in its versions"]
    return AdvisoryHit(id=evaluation.advisory_id, intervals=intervals, fixed=evaluation.fixed)


def _candidates(scheme: Scheme, evaluations: list[Evaluation], floor: Any) -> list[str]:
    """Named fixed versions above the installed one, ascending, one spelling per version. `floor` and the keys
    are sort_key()s: comparable within one scheme."""
    by_key: dict[Any, str] = {}
    for evaluation in evaluations:
        for fixed in evaluation.all_fixed:
            try:
                key = sort_key(scheme, fixed)
            except InvalidVersion:
                continue
            if key > floor:
                by_key.setdefault(key, fixed)
    return [by_key[k] for k in sorted(by_key)]


def _blocker(advisories: Sequence[Advisory], ecosystem: str, package: str, candidate: str) -> str | None:
    """Why `candidate` is not safe (the first advisory still affecting it), or None. Stops at that advisory: a
    rejected candidate need not be judged against the rest."""
    for advisory in advisories:
        if not affects(advisory, ecosystem, package, candidate):
            continue
        evaluation = evaluate(advisory, ecosystem, package, candidate)
        if evaluation is not None:
            where = "; ".join(i.describe() for i in evaluation.intervals) or "listed in its versions"
            return f"still affected by {evaluation.advisory_id} ({where})"
    return None


def _is_pre(scheme: Scheme, version: str) -> bool:
    try:
        return is_prerelease(scheme, version)
    except InvalidVersion:
        return False


def _conclude(remedy: Remedy, candidates: list[str], line: tuple[int, ...]) -> str:
    chosen = _choice(remedy, candidates, line)
    if not remedy.unfixed:
        return chosen
    ids = ", ".join(remedy.unfixed)
    if remedy.version is None and not any(h.id not in remedy.unfixed for h in remedy.affected_by):
        return f"{ids} affect{'s' if len(remedy.unfixed) == 1 else ''} every version from {remedy.installed} on " \
               "and name no fix: no upgrade clears it"
    chosen = chosen.replace("that no advisory affects", "that no advisory with a fix affects")
    one = len(remedy.unfixed) == 1
    return f"{chosen}; {ids} name{'s' if one else ''} no fix and remain{'s' if one else ''} after it"


def _choice(remedy: Remedy, candidates: list[str], line: tuple[int, ...]) -> str:
    line_text = ".".join(map(str, line))
    if remedy.version is None:
        if not candidates:
            return f"the advisories name no fixed version above {remedy.installed}"
        return f"every named fixed version above {remedy.installed} is still affected"
    where = f"in the {line_text} line"
    if not remedy.same_line:
        where = f"above {remedy.installed} (none in the {line_text} line)"
    lower = f"; lower candidates rejected: {len(remedy.rejected)}" if remedy.rejected else ""
    return f"{remedy.version} is the lowest named fixed version {where} that no advisory affects{lower}"
