"""Version ordering and package-name normalisation per ecosystem.

The orderings ("schemes"):
- `pep440` for PyPI: `packaging.version.Version`.
- `gem`, `nuget` for RubyGems and NuGet: aboutcode's `univers`
  (RubygemsVersion: Gem::Version's segments; NugetVersion: NuGet's SemVer with a fourth part), imported
  when such a version is first ordered (~70 ms).
- `maven` for Maven: Maven's ComparableVersion, rewritten in repocontext/osv/maven_versions.py (univers'
  MavenVersion misorders `3.2.1.SP1` and `1.0.RC1` against `-SNAPSHOT` versions).
- `composer` for Packagist: Composer's own normalisation and PHP's version_compare
  (repocontext/osv/composer_versions.py; univers' ComposerVersion reads SemVer, which misorders real
  advisories' `2.3.2-p2`, `1.14.4.1` and `RC` vs `beta`).
  The hypothesis tests hold each to the ecosystem's own tool where Debian has it.
- `semver` for npm, Go, crates.io, Hex, Pub and every `SEMVER`-typed range: SemVer 2
  precedence (build metadata ignored; prerelease identifiers numeric < alphanumeric,
  fewer < more). A leading `v` or `=` and surrounding spaces are tolerated, and
  missing minor/patch parts count as 0. Go pseudo-versions
  (v0.0.0-20200101000000-abcdef123456) are SemVer prereleases, so they sort below
  the release they precede, as SemVer says.
- `generic` for everything else, best effort: the lower-cased version is split into
  runs of digits and runs of letters (other characters only separate); digit runs
  compare numerically; a letter run ranks below a digit run and below the end of the
  version, so `1.0rc1 < 1.0 < 1.0.1` and `1.0a < 1.0b`; zeros ending a run of
  numbers are ignored, so `1.0 == 1.0.0` and `1.0rc1 == 1rc1`. Epochs, Debian `~` and RPM rules are NOT modelled.

Keys are cached, so repeated comparisons of the same strings are cheap.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from packaging.version import InvalidVersion as _PepInvalid
from packaging.version import Version

if TYPE_CHECKING:  # semver is imported where a SemVer version is first parsed: its package imports its CLI
    import semver

Scheme = Literal["pep440", "semver", "generic", "gem", "composer", "maven", "nuget"]

_SEMVER_ECOSYSTEMS = frozenset({"npm", "go", "crates.io", "hex", "pub"})
# Ecosystem (case-folded) → its univers scheme; univers' class names for each.
_UNIVERS_ECOSYSTEMS: dict[str, Scheme] = {"rubygems": "gem", "packagist": "composer", "maven": "maven",
                                          "nuget": "nuget"}
_UNIVERS_CLASSES = {"gem": "RubygemsVersion", "maven": "MavenVersion", "nuget": "NugetVersion"}
# What makes a version a pre-release in each: Gem::Version#prerelease? (any letter); Composer's stability
# flags; Maven's qualifiers below a release (SNAPSHOT, alpha, beta, milestone, rc, cr); NuGet's `-label`.
_PRERELEASE = {
    "gem": re.compile(r"[a-zA-Z]"),
    "composer": re.compile(r"(?i)(?:^|[._+-]|\d)(?:dev|a|alpha|b|beta|rc|p?re(?:view)?)(?:[._-]?\d*)$|^dev-"),
    "maven": re.compile(r"(?i)(?:^|[.-]|\d)(?:snapshot|alpha|a|beta|b|milestone|m|rc|cr|preview|ea)(?:[.-]?\d*)"
                        r"(?:[.-]|$)"),
    "nuget": re.compile(r"^[^+]*-"),
}
_PEP503_RUNS = re.compile(r"[-_.]+")
_GENERIC_TOKENS = re.compile(r"\d+|[a-z]+")
# Maven's ComparableVersion reads a `release` item as the release itself, as it does `ga` and `final`
# (Spring's 4.3.9.RELEASE == 4.3.9); univers' MavenVersion ranks it above, so it is read as `ga`.
_MAVEN_RELEASE = re.compile(r"(?i)(?:^|(?<=[.\-\d]))release(?=$|[.\-\d])")


class InvalidVersion(ValueError):
    """A version string that the ecosystem's ordering cannot parse."""


def ecosystem_key(ecosystem: str) -> str:
    """Ecosystem names compare case-insensitively ("PyPI" == "pypi")."""
    return ecosystem.strip().casefold()


def scheme_for(ecosystem: str, range_type: str = "ECOSYSTEM") -> Scheme:
    if range_type.upper() == "SEMVER":
        return "semver"
    base = ecosystem_key(ecosystem).split(":", 1)[0]
    if base == "pypi":
        return "pep440"
    if base in _UNIVERS_ECOSYSTEMS:
        return _UNIVERS_ECOSYSTEMS[base]
    return "semver" if base in _SEMVER_ECOSYSTEMS else "generic"


def normalize_name(ecosystem: str, name: str) -> str:
    """PEP 503 for PyPI; NuGet ids fold case (nuget.org treats `newtonsoft.json` as Newtonsoft.Json); every
    other ecosystem keeps the name as given (npm and Go are case-sensitive)."""
    name = name.strip()
    key = ecosystem_key(ecosystem)
    if key == "pypi":
        return _PEP503_RUNS.sub("-", name).lower()
    return name.lower() if key == "nuget" else name


@lru_cache(maxsize=65536)
def sort_key(scheme: Scheme, version: str) -> Any:
    """A comparable key for `version` under `scheme`; raises InvalidVersion."""
    if scheme == "pep440":
        try:
            return Version(version)
        except _PepInvalid as exc:
            raise InvalidVersion(f"invalid PEP 440 version {version!r}") from exc
    if scheme == "semver":
        return _semver_key(_semver(version))
    if scheme == "composer":
        return _composer(version)
    if scheme == "maven":
        return _maven(version)
    if scheme in _UNIVERS_CLASSES:
        return _univers(scheme, version)
    return _generic_key(version)


def compare(scheme: Scheme, a: str, b: str) -> int:
    ka, kb = sort_key(scheme, a), sort_key(scheme, b)
    return (ka > kb) - (ka < kb)


def equal(scheme: Scheme, a: str, b: str) -> bool:
    """Same version: identical strings, or equal keys when both parse (PyPI "2.0" == "2.0.0")."""
    if a == b:
        return True
    try:
        return bool(sort_key(scheme, a) == sort_key(scheme, b))
    except InvalidVersion:
        return False


def is_prerelease(scheme: Scheme, version: str) -> bool:
    if scheme == "pep440":
        return bool(sort_key(scheme, version).is_prerelease)
    if scheme == "semver":
        return _semver(version).prerelease is not None
    if scheme in _PRERELEASE:
        sort_key(scheme, version)  # raises InvalidVersion as the other schemes do
        return bool(_PRERELEASE[scheme].search(version.strip()))
    return any(kind == 0 for kind, _, _ in sort_key(scheme, version))


def release_line(scheme: Scheme, version: str) -> tuple[int, ...]:
    """The release line a version belongs to: major.minor for PEP 440, major for SemVer and generic."""
    if scheme == "pep440":
        release = sort_key(scheme, version).release
        return (*release, 0)[:2]
    if scheme == "semver":
        return (_semver(version).major,)
    if scheme in _UNIVERS_CLASSES or scheme == "composer":  # the major: the first number (all alike)
        sort_key(scheme, version)
        first = re.match(r"\D*(\d+)", version)
        return (int(first.group(1)) if first else 0,)
    numbers = [value for kind, value, _ in sort_key(scheme, version) if kind == 2]
    return (numbers[0] if numbers else 0,)


def _composer(version: str) -> Any:
    from repocontext.osv import composer_versions

    try:
        return composer_versions.key(version)
    except composer_versions.ComposerVersionError as exc:
        raise InvalidVersion(str(exc)) from exc


def _maven(version: str) -> Any:
    """Maven's ComparableVersion (repocontext/osv/maven_versions.py): univers' MavenVersion misorders
    `3.2.1.SP1` and `1.0.RC1` against `-SNAPSHOT` versions."""
    from repocontext.osv.maven_versions import MavenVersion

    try:
        return MavenVersion(version)
    except ValueError as exc:
        raise InvalidVersion(f"invalid maven version {version!r}") from exc


def _univers(scheme: Scheme, version: str) -> Any:
    from univers import versions

    text = _MAVEN_RELEASE.sub("ga", version.strip()) if scheme == "maven" else version.strip()
    try:
        return getattr(versions, _UNIVERS_CLASSES[scheme])(text)
    except (ValueError, TypeError, AttributeError, versions.InvalidVersion) as exc:
        raise InvalidVersion(f"invalid {scheme} version {version!r}") from exc


@lru_cache(maxsize=65536)
def _semver(version: str) -> semver.Version:
    import semver

    text = version.strip().lstrip("=").strip().removeprefix("v")
    try:
        return semver.Version.parse(text, optional_minor_and_patch=True)
    except (ValueError, TypeError) as exc:
        raise InvalidVersion(f"invalid SemVer version {version!r}") from exc


def _semver_key(parsed: semver.Version) -> tuple[Any, ...]:
    if parsed.prerelease is None:
        pre: tuple[Any, ...] = (1,)
    else:
        parts = str(parsed.prerelease).split(".")
        pre = (0, *((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts))
    return (parsed.major, parsed.minor, parsed.patch, pre)


def _generic_key(version: str) -> tuple[tuple[int, int, str], ...]:
    tokens = _GENERIC_TOKENS.findall(version.lower())
    if not tokens:
        raise InvalidVersion(f"no version parts in {version!r}")
    key: list[tuple[int, int, str]] = []
    run: list[tuple[int, int, str]] = []  # the current run of numbers, whose trailing zeros do not count
    for token in tokens:
        if token.isdigit():
            run.append((2, int(token), ""))
            continue
        key.extend(_strip_zeros(run))
        run = []
        key.append((0, 0, token))
    key.extend(_strip_zeros(run))
    return (*key, (1, 0, ""))


def _strip_zeros(run: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    while run and run[-1][1] == 0:
        run = run[:-1]
    return run
