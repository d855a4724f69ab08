"""Choosing an upgrade target from several advisories."""

from __future__ import annotations

from repocontext.osv.remedy import choose_remedy
from repocontext.osv.schema import Advisory


def adv(ident: str, *events: dict[str, str], ecosystem: str = "PyPI", name: str = "pkg",
        withdrawn: str | None = None) -> Advisory:
    return Advisory.model_validate({
        "id": ident, "withdrawn": withdrawn,
        "affected": [{"package": {"ecosystem": ecosystem, "name": name},
                      "ranges": [{"type": "ECOSYSTEM", "events": list(events)}]}],
    })


LINES = adv("A", {"introduced": "3.2"}, {"fixed": "3.2.20"}, {"introduced": "4.0"}, {"fixed": "4.1.10"},
            {"introduced": "4.2"}, {"fixed": "4.2.3"})


def test_prefers_the_fix_in_the_installed_release_line() -> None:
    remedy = choose_remedy([LINES], "PyPI", "pkg", "3.2.19")
    assert remedy.version == "3.2.20" and remedy.same_line and not remedy.no_fix
    assert remedy.affected_by[0].id == "A" and remedy.affected_by[0].intervals == [">=3.2, <3.2.20"]
    assert "3.2 line" in remedy.reason


def test_skips_candidates_another_advisory_still_affects() -> None:
    later = adv("B", {"introduced": "3.2"}, {"fixed": "3.2.22"}, {"introduced": "4.0"}, {"fixed": "4.2.5"})
    remedy = choose_remedy([LINES, later], "PyPI", "pkg", "3.2.19")
    assert remedy.version == "3.2.22" and remedy.same_line
    assert [(r.version, r.reason) for r in remedy.rejected] == [
        ("3.2.20", "still affected by B (>=3.2, <3.2.22)")]
    assert [h.id for h in remedy.affected_by] == ["A", "B"]


def test_no_fix_in_the_line_falls_back_to_the_lowest_safe_version_above() -> None:
    only_new = adv("C", {"introduced": "0"}, {"fixed": "4.1.10"}, {"introduced": "4.2"}, {"fixed": "4.2.3"})
    remedy = choose_remedy([only_new], "PyPI", "pkg", "3.2.19")
    assert remedy.version == "4.1.10" and not remedy.same_line
    assert "none in the 3.2 line" in remedy.reason


def test_fixes_below_the_installed_version_are_never_candidates() -> None:
    both = adv("D", {"introduced": "0"}, {"fixed": "4.0.5"}, {"introduced": "4.1"}, {"fixed": "4.1.7"})
    remedy = choose_remedy([both], "PyPI", "pkg", "4.1.2")
    assert remedy.version == "4.1.7" and remedy.same_line
    assert remedy.rejected == []  # 4.0.5 is below the installed 4.1.2


def test_no_fixed_version_sets_the_flag() -> None:
    unfixed = adv("E", {"introduced": "0"}, {"last_affected": "1.11.0"})
    remedy = choose_remedy([unfixed], "PyPI", "pkg", "1.10")
    assert remedy.version is None and remedy.no_fix
    assert "name no fixed version" in remedy.reason


def test_every_fix_still_affected_sets_the_flag() -> None:
    a = adv("F", {"introduced": "0"}, {"fixed": "2.0"})
    forever = adv("G", {"introduced": "1.5"})
    remedy = choose_remedy([a, forever], "PyPI", "pkg", "1.0")
    assert remedy.no_fix and remedy.version is None
    assert [r.version for r in remedy.rejected] == ["2.0"]
    assert "still affected" in remedy.reason


def test_not_affected_and_withdrawn() -> None:
    gone = adv("H", {"introduced": "0"}, {"fixed": "9.0"}, withdrawn="2024-01-01T00:00:00Z")
    remedy = choose_remedy([LINES, gone], "PyPI", "pkg", "3.2.20")
    assert remedy.version is None and not remedy.no_fix and remedy.affected_by == []
    assert "not affected" in remedy.reason


def test_prereleases_only_when_nothing_final_qualifies() -> None:
    pre = adv("I", {"introduced": "0"}, {"fixed": "2.0rc1"}, {"fixed": "2.0"})
    assert choose_remedy([pre], "PyPI", "pkg", "1.0").version == "2.0"
    only_pre = adv("J", {"introduced": "0"}, {"fixed": "2.0rc1"})
    assert choose_remedy([only_pre], "PyPI", "pkg", "1.0").version == "2.0rc1"


def test_semver_release_line_is_the_major() -> None:
    a = adv("K", {"introduced": "1.0.0"}, {"fixed": "1.4.2"}, {"introduced": "2.0.0"}, {"fixed": "2.1.0"},
            ecosystem="npm", name="lib")
    remedy = choose_remedy([a], "npm", "lib", "1.3.0")
    assert remedy.version == "1.4.2" and remedy.same_line


def test_invalid_installed_version() -> None:
    remedy = choose_remedy([adv("L", {"introduced": "0"}, {"fixed": "2.0"})], "PyPI", "pkg", "not valid")
    assert remedy.version is None and not remedy.affected_by
