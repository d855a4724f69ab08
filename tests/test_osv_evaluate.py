"""OSV range evaluation, rule by rule, on small hand-written records."""

from __future__ import annotations

from typing import Any

import pytest

from repocontext.osv.evaluate import evaluate
from repocontext.osv.schema import Advisory


def advisory(events: list[dict[str, str]] | None = None, *, versions: list[str] | None = None,
             ecosystem: str = "PyPI", name: str = "pkg", range_type: str = "ECOSYSTEM",
             **extra: Any) -> Advisory:
    ranges = [{"type": range_type, "events": events}] if events is not None else []
    return Advisory.model_validate({
        "id": extra.pop("id", "TEST-1"),
        "modified": "2024-01-01T00:00:00Z",
        "affected": [{"package": {"ecosystem": ecosystem, "name": name}, "ranges": ranges,
                      "versions": versions or []}],
        **extra,
    })


def affected(adv: Advisory, version: str, ecosystem: str = "PyPI", name: str = "pkg") -> bool:
    result = evaluate(adv, ecosystem, name, version)
    assert result is not None
    return result.affected


def test_versions_list_matches_exact_and_equivalent_spellings() -> None:
    adv = advisory(versions=["1.0", "1.1"])
    assert affected(adv, "1.1")
    assert affected(adv, "1.0.0")  # PEP 440: same version
    assert not affected(adv, "1.2")


def test_introduced_fixed_is_half_open() -> None:
    adv = advisory([{"introduced": "1.0"}, {"fixed": "1.5"}])
    assert not affected(adv, "0.9")
    assert affected(adv, "1.0")
    assert affected(adv, "1.4.9")
    assert not affected(adv, "1.5")
    assert not affected(adv, "2.0")


def test_introduced_zero_means_from_the_beginning() -> None:
    adv = advisory([{"introduced": "0"}, {"fixed": "0.3"}])
    assert affected(adv, "0.0.1")
    assert affected(adv, "0.1.dev0")
    assert not affected(adv, "0.3")


def test_last_affected_is_inclusive() -> None:
    adv = advisory([{"introduced": "0"}, {"last_affected": "1.11.0"}])
    result = evaluate(adv, "PyPI", "pkg", "1.11.0")
    assert result is not None and result.affected
    assert result.fixed == []  # no fix known for a last_affected interval
    assert result.intervals[0].describe() == "<=1.11.0"
    assert not affected(adv, "1.11.1")


def test_limit_is_exclusive_upper_bound_and_star_is_infinity() -> None:
    limited = advisory([{"introduced": "1.0"}, {"limit": "2.0"}])
    assert affected(limited, "1.9")
    assert not affected(limited, "2.0")
    unlimited = advisory([{"introduced": "1.0"}, {"limit": "*"}])
    assert affected(unlimited, "99.0")


def test_unsorted_events_and_release_lines_pick_the_containing_interval() -> None:
    # As the django records write them: newest line first.
    adv = advisory([
        {"introduced": "4.2"}, {"fixed": "4.2.3"},
        {"introduced": "4.0"}, {"fixed": "4.1.10"},
        {"introduced": "3.2"}, {"fixed": "3.2.20"},
    ])
    result = evaluate(adv, "PyPI", "pkg", "3.2.19")
    assert result is not None and result.affected
    assert result.fixed == ["3.2.20"]
    assert result.all_fixed == ["3.2.20", "4.1.10", "4.2.3"]
    assert result.intervals[0].describe() == ">=3.2, <3.2.20"
    middle = evaluate(adv, "PyPI", "pkg", "4.1.9")
    assert middle is not None and middle.fixed == ["4.1.10"]
    assert not affected(adv, "3.2.20")
    assert not affected(adv, "3.1")
    assert not affected(adv, "4.1.10")
    assert affected(adv, "4.2.2")


def test_several_ranges_and_entries_collect_every_containing_fix() -> None:
    adv = Advisory.model_validate({
        "id": "TEST-2",
        "affected": [
            {"package": {"ecosystem": "PyPI", "name": "pkg"},
             "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "2.0"}]}]},
            {"package": {"ecosystem": "PyPI", "name": "pkg"},
             "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "1.5"}, {"fixed": "1.8"}]}]},
        ],
    })
    result = evaluate(adv, "PyPI", "pkg", "1.6")
    assert result is not None and result.fixed == ["1.8", "2.0"]


def test_withdrawn_advisories_are_skipped() -> None:
    adv = advisory([{"introduced": "0"}], withdrawn="2024-02-01T00:00:00Z")
    result = evaluate(adv, "PyPI", "pkg", "1.0")
    assert result is not None
    assert result.withdrawn and not result.affected
    assert "withdrawn" in result.notes[0]


def test_git_ranges_are_skipped_with_a_note_but_versions_still_count() -> None:
    adv = Advisory.model_validate({
        "id": "TEST-GIT",
        "affected": [{
            "package": {"ecosystem": "PyPI", "name": "pkg"},
            "ranges": [{"type": "GIT", "repo": "https://example.com/r.git",
                        "events": [{"introduced": "0"}, {"fixed": "a" * 40}]}],
            "versions": ["1.0"],
        }],
    })
    listed = evaluate(adv, "PyPI", "pkg", "1.0")
    assert listed is not None and listed.affected and listed.in_versions_list
    assert any("GIT range skipped" in n for n in listed.notes)
    other = evaluate(adv, "PyPI", "pkg", "0.5")
    assert other is not None and not other.affected


def test_git_only_record_is_not_checked() -> None:
    adv = Advisory.model_validate({
        "id": "TEST-GIT2",
        "affected": [{"package": {"ecosystem": "PyPI", "name": "pkg"},
                      "ranges": [{"type": "GIT", "repo": "r", "events": [{"introduced": "0"}]}]}],
    })
    result = evaluate(adv, "PyPI", "pkg", "1.0")
    assert result is not None and not result.checked and not result.affected


def test_invalid_installed_version_is_a_note_not_a_crash() -> None:
    adv = advisory([{"introduced": "0"}, {"fixed": "2.0"}], versions=["weird-build"])
    result = evaluate(adv, "PyPI", "pkg", "weird-build")
    assert result is not None
    assert result.affected and result.in_versions_list  # the explicit list still matches
    assert any("invalid PEP 440 version" in n for n in result.notes)
    unlisted = evaluate(adv, "PyPI", "pkg", "also weird")
    assert unlisted is not None and not unlisted.affected


def test_invalid_event_version_skips_only_that_range() -> None:
    adv = Advisory.model_validate({
        "id": "TEST-3",
        "affected": [{"package": {"ecosystem": "PyPI", "name": "pkg"}, "ranges": [
            {"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "not/valid"}]},
            {"type": "ECOSYSTEM", "events": [{"introduced": "1.0"}, {"fixed": "1.2"}]},
        ]}],
    })
    result = evaluate(adv, "PyPI", "pkg", "1.1")
    assert result is not None and result.affected and result.fixed == ["1.2"]
    assert any("not/valid" in n for n in result.notes)


def test_package_matching_uses_ecosystem_rules() -> None:
    adv = advisory([{"introduced": "0"}], name="Django_Foo")
    assert evaluate(adv, "pypi", "django-foo", "1.0") is not None
    assert evaluate(adv, "npm", "django-foo", "1.0") is None
    npm = advisory([{"introduced": "0"}], ecosystem="npm", name="Left-Pad")
    assert evaluate(npm, "npm", "left-pad", "1.0.0") is None  # npm names are case-sensitive
    assert evaluate(npm, "npm", "Left-Pad", "1.0.0") is not None


def test_semver_range_type_and_npm_prefixes() -> None:
    adv = advisory([{"introduced": "1.0.0"}, {"fixed": "1.4.2"}], ecosystem="npm", name="lib", range_type="SEMVER")
    assert affected(adv, "v1.4.1", "npm", "lib")
    assert affected(adv, "=1.0.0", "npm", "lib")
    assert not affected(adv, "1.4.2", "npm", "lib")
    assert affected(adv, "1.4.2-rc.1", "npm", "lib")  # prerelease of the fix is still before it


def test_go_pseudo_version_in_range() -> None:
    adv = advisory([{"introduced": "0"}, {"fixed": "0.1.0"}], ecosystem="Go", name="example.com/m")
    assert affected(adv, "v0.0.0-20200101000000-abcdef123456", "Go", "example.com/m")
    assert not affected(adv, "v0.1.0", "Go", "example.com/m")


def test_generic_ecosystem_best_effort() -> None:
    adv = advisory([{"introduced": "2.0"}, {"fixed": "2.10.1"}], ecosystem="Maven", name="g:a")
    assert affected(adv, "2.9.0", "Maven", "g:a")
    assert not affected(adv, "2.10.1", "Maven", "g:a")


@pytest.mark.parametrize("version", ["1.0", "1.5"])
def test_consecutive_introduced_events_form_one_interval(version: str) -> None:
    adv = advisory([{"introduced": "1.0"}, {"introduced": "1.5"}, {"fixed": "2.0"}])
    result = evaluate(adv, "PyPI", "pkg", version)
    assert result is not None and result.affected
    assert result.intervals[0].describe() == ">=1.0, <2.0"


def test_severity_comes_with_the_evaluation() -> None:
    adv = advisory([{"introduced": "0"}], severity=[
        {"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"}])
    result = evaluate(adv, "PyPI", "pkg", "1.0")
    assert result is not None
    assert result.severity.label == "CRITICAL" and result.severity.score == 9.8


def test_gem_fix_in_a_prerelease_of_the_line_it_opens_is_an_empty_interval() -> None:
    """RubySec writes `~> 3.1.0.rc6` as introduced 3.1, fixed 3.1.0.rc6: below its opening in Gem order, so a
    sorted walk would leave every later release affected (Rails 8 by a 2011 advisory). The pair is dropped."""
    adv = advisory([{"introduced": "3.0.0"}, {"fixed": "3.0.10"}, {"introduced": "3.1"}, {"fixed": "3.1.0.rc6"}],
                   ecosystem="RubyGems", name="actionpack")
    assert affected(adv, "3.0.9", "RubyGems", "actionpack")
    assert not affected(adv, "3.0.10", "RubyGems", "actionpack")
    assert not affected(adv, "3.1.0", "RubyGems", "actionpack")
    assert not affected(adv, "8.1.3.1", "RubyGems", "actionpack")
