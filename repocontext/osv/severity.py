"""Severity of an advisory: a qualitative label, the CVSS vector and, for CVSS v3, the base score.

The label comes from the record when it has one (`database_specific.severity`, as
GitHub advisories write it, or the package entry's `ecosystem_specific` /
`database_specific` severity); otherwise it is derived from the CVSS v3 base score
with the CVSS qualitative scale. CVSS v2 and v4 vectors are reported, not scored.
"""

from __future__ import annotations

import math

from pydantic import BaseModel

from repocontext.osv.schema import Advisory, Affected, Severity

# CVSS v3.x base metric weights (FIRST CVSS v3.1 specification, section 7.4).
_AV = {"N": 0.85, "A": 0.62, "L": 0.55, "P": 0.2}
_AC = {"L": 0.77, "H": 0.44}
_PR_UNCHANGED = {"N": 0.85, "L": 0.62, "H": 0.27}
_PR_CHANGED = {"N": 0.85, "L": 0.68, "H": 0.5}
_UI = {"N": 0.85, "R": 0.62}
_CIA = {"H": 0.56, "L": 0.22, "N": 0.0}
_VECTOR_PREFERENCE = ("CVSS_V3", "CVSS_V4", "CVSS_V2")


class SeverityInfo(BaseModel):
    label: str | None = None  # "CRITICAL" | "HIGH" | "MODERATE"/"MEDIUM" | "LOW" | …, as the source writes it
    cvss: str | None = None  # the vector string
    score: float | None = None  # CVSS v3 base score when computable


def severity_of(advisory: Advisory, affected: Affected | None = None) -> SeverityInfo:
    """Package-level severity entries win over the record's (the schema allows one or the other)."""
    entries = (affected.severity if affected and affected.severity else []) or advisory.severity
    cvss = _preferred_vector(entries)
    score = cvss_v3_base_score(cvss) if cvss and cvss.startswith("CVSS:3") else None
    label = _record_label(advisory, affected)
    if label is None and score is not None:
        label = rating(score)
    if label is None:
        label = next((e.score.upper() for e in entries if e.type == "Ubuntu" and e.score), None)
    return SeverityInfo(label=label, cvss=cvss, score=score)


def _preferred_vector(entries: list[Severity]) -> str | None:
    by_type = {e.type.upper(): e.score for e in reversed(entries) if e.score}
    return next((by_type[t] for t in _VECTOR_PREFERENCE if t in by_type), None)


def _record_label(advisory: Advisory, affected: Affected | None) -> str | None:
    sources = [advisory.database_specific]
    if affected is not None:
        sources = [affected.ecosystem_specific, affected.database_specific, *sources]
    for source in sources:
        value = (source or {}).get("severity")
        if isinstance(value, str) and value.strip():
            return value.strip().upper()
    return None


def rating(score: float) -> str:
    if score == 0:
        return "NONE"
    if score < 4.0:
        return "LOW"
    if score < 7.0:
        return "MEDIUM"
    return "HIGH" if score < 9.0 else "CRITICAL"


def cvss_v3_base_score(vector: str) -> float | None:
    """The CVSS v3.0/3.1 base score of a vector, or None when the vector is incomplete or invalid."""
    metrics = dict(part.split(":", 1) for part in vector.split("/")[1:] if ":" in part)
    try:
        changed = metrics["S"] == "C"
        pr = (_PR_CHANGED if changed else _PR_UNCHANGED)[metrics["PR"]]
        exploitability = 8.22 * _AV[metrics["AV"]] * _AC[metrics["AC"]] * pr * _UI[metrics["UI"]]
        iss = 1 - (1 - _CIA[metrics["C"]]) * (1 - _CIA[metrics["I"]]) * (1 - _CIA[metrics["A"]])
    except KeyError:
        return None
    impact = 7.52 * (iss - 0.029) - 3.25 * (iss - 0.02) ** 15 if changed else 6.42 * iss
    if impact <= 0:
        return 0.0
    total = impact + exploitability
    return _round_up(min(1.08 * total if changed else total, 10.0))


def _round_up(value: float) -> float:
    """CVSS v3.1 Roundup: the smallest one-decimal number >= value, robust to float noise."""
    scaled = round(value * 100_000)
    if scaled % 10_000 == 0:
        return scaled / 100_000
    return (math.floor(scaled / 10_000) + 1) / 10.0
