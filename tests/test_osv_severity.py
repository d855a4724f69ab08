"""Severity labels, CVSS vectors and CVSS v3 base scores."""

from __future__ import annotations

import pytest

from repocontext.osv.schema import Advisory
from repocontext.osv.severity import cvss_v3_base_score, rating, severity_of


@pytest.mark.parametrize(
    ("vector", "score"),
    [
        ("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", 9.8),
        ("CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:C/C:H/I:N/A:N", 6.8),
        ("CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N", 6.1),
        ("CVSS:3.0/AV:L/AC:L/PR:L/UI:N/S:U/C:N/I:N/A:H", 5.5),
        ("CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:C/C:H/I:H/A:H", 9.9),
        ("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:N", 0.0),
    ],
)
def test_cvss_v3_base_scores(vector: str, score: float) -> None:
    assert cvss_v3_base_score(vector) == score


def test_incomplete_vector_has_no_score() -> None:
    assert cvss_v3_base_score("CVSS:3.1/AV:N/AC:L") is None
    assert cvss_v3_base_score("CVSS:3.1/AV:X/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H") is None


def test_rating_bands() -> None:
    assert [rating(s) for s in (0.0, 3.9, 4.0, 6.9, 7.0, 8.9, 9.0)] == [
        "NONE", "LOW", "MEDIUM", "MEDIUM", "HIGH", "HIGH", "CRITICAL"]


def test_record_label_wins_and_vector_is_kept() -> None:
    adv = Advisory.model_validate({
        "id": "GHSA-x", "database_specific": {"severity": "moderate"},
        "severity": [{"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"}],
    })
    info = severity_of(adv)
    assert info.label == "MODERATE"
    assert info.cvss is not None and info.cvss.startswith("CVSS:3.1/")
    assert info.score == 9.8


def test_package_level_severity_and_v4_only() -> None:
    v4 = "CVSS:4.0/AV:N/AC:L/AT:N/PR:H/UI:N/VC:L/VI:L/VA:N/SC:N/SI:N/SA:N"
    adv = Advisory.model_validate({
        "id": "X-1",
        "affected": [{"package": {"ecosystem": "npm", "name": "a"}, "severity": [{"type": "CVSS_V4", "score": v4}]}],
    })
    info = severity_of(adv, adv.affected[0])
    assert info.cvss == v4 and info.score is None and info.label is None


def test_no_severity_at_all() -> None:
    info = severity_of(Advisory.model_validate({"id": "X-2"}))
    assert info.label is None and info.cvss is None
