"""OSV version ordering against the ecosystems' own comparison fixtures (osv-scanner's, the SemVer spec's):
every line of tests/fixtures/version_ordering/ holds both ways round under `sort_key(scheme_for(ecosystem))`,
except the lines named in DISAGREES, each with why. A line that starts to hold, or one that stops, fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from repocontext.osv.versions import InvalidVersion, Scheme, scheme_for, sort_key

FIXTURES = Path(__file__).parent / "fixtures" / "version_ordering"

CASES = [("PyPI", "pypi-versions.txt"), ("npm", "semver-versions.txt"), ("Go", "semver-versions.txt"),
         ("crates.io", "semver-versions.txt"), ("RubyGems", "rubygems-versions-generated.txt"),
         ("Packagist", "packagist-versions-generated.txt"), ("Maven", "maven-versions.txt"),
         ("NuGet", "nuget-versions.txt")]

_LEGACY = "a pre-PEP 440 'legacy' version: packaging 22+ rejects it (osv-scanner's fixture keeps it on purpose)"
DISAGREES: dict[tuple[str, str], str] = {
    **{("PyPI", line): _LEGACY for line in (
        "0.1-bulbasaur < 0.1-charmander", "0.1-charmander < 0.9-doduo", "0.9-doduo < 0.9-eevee",
        "0.9-eevee < 0.9-fearow", "0.9-fearow < 0.9-gyarados", "0.9-gyarados < 0.9-horsea",
        "0.9-horsea < 0.9-ivysaur", "0.9-ivysaur < 1.0", "-class.-jw.util.version.version-pre < 1.0",
        "-class.-jw.util.version.version-preview < 1.0", "-class.-jw.util.version.version-dev < 1.0")},
    ("Maven", "1-1 = 1-ga-1"): "univers and Maven 3.8.7's ComparableVersion both order 1-1 above 1-ga-1; "
                               "osv-scanner follows a later Maven, where `ga` between numbers is dropped",
}


def _lines(name: str) -> list[str]:
    return [line for line in (FIXTURES / name).read_text().splitlines()
            if line and not line.startswith(("// ", "# "))]


def _holds(scheme: Scheme, line: str) -> bool:
    left, op, right = line.split(" ")
    try:
        a, b = sort_key(scheme, left), sort_key(scheme, right)
    except InvalidVersion:
        return False
    expected = {"<": (True, False), ">": (False, True), "=": (False, False)}[op]
    return (bool(a < b), bool(b < a)) == expected and (op != "=" or bool(a == b))


@pytest.mark.parametrize(("ecosystem", "name"), CASES)
def test_sort_key_orders_every_fixture_line(ecosystem: str, name: str) -> None:
    scheme = scheme_for(ecosystem)
    lines = _lines(name)
    assert len(lines) >= 10
    failing = {line for line in lines if not _holds(scheme, line)}
    known = {line for (eco, line), _ in DISAGREES.items() if eco == ecosystem}
    assert sorted(failing - known) == [], "disagrees with the fixture"
    assert sorted(known & set(lines) - failing) == [], "now agrees: drop these from DISAGREES"
