"""Version ordering and name normalisation per ecosystem."""

from __future__ import annotations

import pytest

from repocontext.osv.versions import (
    InvalidVersion,
    compare,
    equal,
    is_prerelease,
    normalize_name,
    release_line,
    scheme_for,
)


@pytest.mark.parametrize(
    ("ecosystem", "range_type", "scheme"),
    [
        ("PyPI", "ECOSYSTEM", "pep440"),
        ("pypi", "ECOSYSTEM", "pep440"),
        ("npm", "ECOSYSTEM", "semver"),
        ("Go", "ECOSYSTEM", "semver"),
        ("crates.io", "ECOSYSTEM", "semver"),
        ("Maven", "ECOSYSTEM", "maven"),
        ("RubyGems", "ECOSYSTEM", "gem"),
        ("Packagist", "ECOSYSTEM", "composer"),
        ("NuGet", "ECOSYSTEM", "nuget"),
        ("Debian:12", "ECOSYSTEM", "generic"),
        ("Maven", "SEMVER", "semver"),
        ("PyPI", "semver", "semver"),
    ],
)
def test_scheme_per_ecosystem_and_range_type(ecosystem: str, range_type: str, scheme: str) -> None:
    assert scheme_for(ecosystem, range_type) == scheme


@pytest.mark.parametrize(
    ("low", "high"),
    [
        ("1.0rc1", "1.0"),
        ("1.0.dev1", "1.0a1"),
        ("1.0", "1.0.post1"),
        ("2.9", "2.10"),
        ("4.1.9", "4.1.10"),
        ("1!0.1", "1!0.2"),
        ("0.9", "1!0.1"),  # epoch wins
    ],
)
def test_pep440_order(low: str, high: str) -> None:
    assert compare("pep440", low, high) == -1
    assert compare("pep440", high, low) == 1


def test_pep440_equal_spellings() -> None:
    assert equal("pep440", "2.0", "2.0.0")
    assert equal("pep440", "1.0-alpha2", "1.0a2")
    assert not equal("pep440", "2.0", "2.0.1")


def test_pep440_invalid_version_raises_invalid_version() -> None:
    with pytest.raises(InvalidVersion, match="PEP 440"):
        compare("pep440", "not a version", "1.0")
    assert not equal("pep440", "not a version", "1.0")


@pytest.mark.parametrize(
    ("low", "high"),
    [
        ("1.0.0-alpha", "1.0.0-alpha.1"),
        ("1.0.0-alpha.1", "1.0.0-alpha.beta"),
        ("1.0.0-beta.2", "1.0.0-beta.11"),
        ("1.0.0-rc.1", "1.0.0"),
        ("1.9.0", "1.10.0"),
        ("v1.2.3", "=1.2.4"),
        (" 1.2.3 ", "v2.0.0"),
    ],
)
def test_semver_precedence(low: str, high: str) -> None:
    assert compare("semver", low, high) == -1


def test_semver_ignores_build_metadata_and_tolerates_short_versions() -> None:
    assert compare("semver", "1.0.0+build.1", "1.0.0+build.2") == 0
    assert compare("semver", "v1.2", "1.2.0") == 0


def test_go_pseudo_versions_are_prereleases() -> None:
    pseudo = "v0.0.0-20200101000000-abcdef123456"
    assert compare("semver", pseudo, "v0.0.0") == -1
    assert compare("semver", pseudo, "v0.0.0-20210101000000-abcdef123456") == -1
    assert compare("semver", "v1.2.4-0.20200101000000-abcdef123456", "v1.2.4") == -1
    assert compare("semver", "v1.2.3", "v1.2.4-0.20200101000000-abcdef123456") == -1
    assert is_prerelease("semver", pseudo)


def test_semver_invalid_raises() -> None:
    with pytest.raises(InvalidVersion):
        compare("semver", "01.2.3", "1.2.3")


@pytest.mark.parametrize(
    ("low", "high"),
    [("1.0rc1", "1.0"), ("1.0", "1.0.1"), ("1.0a", "1.0b"), ("1.9", "1.10"), ("2.0-beta", "2.0")],
)
def test_generic_order(low: str, high: str) -> None:
    assert compare("generic", low, high) == -1


def test_generic_trailing_zeros_do_not_count() -> None:
    assert compare("generic", "1.0", "1.0.0") == 0
    with pytest.raises(InvalidVersion):
        compare("generic", "...", "1")


def test_prerelease_and_release_line() -> None:
    assert is_prerelease("pep440", "4.2rc1")
    assert not is_prerelease("pep440", "4.2.post1")
    assert release_line("pep440", "3.2.19") == (3, 2)
    assert release_line("pep440", "3") == (3, 0)
    assert release_line("semver", "v2.3.4") == (2,)
    assert release_line("generic", "5.1-2") == (5,)
    assert is_prerelease("generic", "1.0rc1")


def test_name_normalisation() -> None:
    assert normalize_name("PyPI", "Django_Rest.Framework") == "django-rest-framework"
    assert normalize_name("pypi", "zope..interface") == "zope-interface"
    assert normalize_name("npm", "@Scope/Pkg") == "@Scope/Pkg"
    assert normalize_name("Go", "github.com/Foo/Bar") == "github.com/Foo/Bar"
