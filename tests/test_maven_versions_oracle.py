"""The "maven" ordering (repocontext/osv/maven_versions.py) held to Maven's own ComparableVersion.

maven-artifact's jar has a main that prints how each version it is given compares with the next; one JVM run
judges a whole list. Versions are drawn in the shapes real artifacts use (one to four numbers, a known or
common qualifier after `-` or `.`, maybe numbered, maybe `-SNAPSHOT`) and in free shapes (numbers and words,
`a`/`b`/`m` before digits, leading zeros, long numbers, any of `.`, `-` or nothing between them). univers'
MavenVersion, used before, failed the first shapes on `3.2.1.SP1` and `1.0.RC1` against `-SNAPSHOT`.
"""

from __future__ import annotations

import glob
import itertools
import re
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repocontext.osv.versions import compare

_JARS = sorted(glob.glob("/usr/share/maven/lib/maven-artifact-*.jar"))
pytestmark = pytest.mark.skipif(not _JARS or shutil.which("java") is None,
                                reason="maven (java and maven-artifact's jar) is not installed")
_QUALIFIERS = ("alpha", "beta", "milestone", "rc", "cr", "snapshot", "ga", "final", "release", "sp", "M", "RC",
               "Final", "RELEASE", "SNAPSHOT", "jre", "android", "Beta", "Alpha", "GA", "SP", "CR", "incubating")
_NUMBER = st.sampled_from([0, 1, 2, 3, 9, 10, 12, 100]).map(str)
_QUALIFIER = st.tuples(st.sampled_from(["-", "."]), st.sampled_from(_QUALIFIERS),
                       st.sampled_from(["", "", "-", "."]), st.one_of(st.just(""), _NUMBER))
_VERSION = st.builds(
    lambda numbers, qualifier, snapshot: ".".join(numbers) + (
        "" if qualifier is None else qualifier[0] + qualifier[1] + (qualifier[2] + qualifier[3] if qualifier[3]
                                                                    else "")) + ("-SNAPSHOT" if snapshot else ""),
    st.lists(_NUMBER, min_size=1, max_size=4), st.one_of(st.none(), _QUALIFIER), st.booleans())
_WORDS = ("alpha", "beta", "milestone", "rc", "cr", "snapshot", "ga", "final", "release", "sp", "a", "b", "m", "x",
          "foo", "jre", "SNAPSHOT", "Final", "RELEASE", "")
_FREE = st.builds(lambda first, rest: first + "".join(sep + part for sep, part in rest),
                  st.sampled_from(["0", "1", "2", "3"]),
                  st.lists(st.tuples(st.sampled_from([".", "-", ""]),
                                     st.one_of(st.sampled_from(["0", "1", "2", "10", "007", "1234567890123"]),
                                               st.sampled_from(_WORDS))), max_size=6))
_LINE = re.compile(r"^\s+(\S+) (<|>|==) (\S+)$")


def maven_order(versions: list[str]) -> list[tuple[str, str, str]]:
    """(a, op, b) for each consecutive pair, as ComparableVersion's main prints them."""
    out = subprocess.run(["java", "-cp", _JARS[-1], "org.apache.maven.artifact.versioning.ComparableVersion",
                          *versions], capture_output=True, text=True, timeout=60, check=True).stdout
    return [found.groups() for line in out.splitlines() if (found := _LINE.match(line))]  # type: ignore[misc]


@settings(max_examples=4, deadline=None)
@given(st.lists(st.one_of(_VERSION, _FREE), min_size=40, max_size=100))
def test_maven_scheme_orders_as_comparable_version(versions: list[str]) -> None:
    pairs = maven_order(versions)
    assert len(pairs) == len(versions) - 1
    for a, op, b in pairs:
        assert {-1: "<", 0: "==", 1: ">"}[compare("maven", a, b)] == op, (a, op, b)


def test_real_artifact_versions_in_maven_order() -> None:
    """Versions as Maven Central spells them (Netty's .Final, Guava's -jre, Spring's .RELEASE, milestones)."""
    ordered = ["1.0-alpha-1", "1.0-beta-2", "1.0-M1", "1.0-RC1", "1.0-SNAPSHOT", "1.0", "1.0-sp1", "1.0.1",
               "2.14.1", "2.15.0", "2.17.1", "4.1.100.Final", "4.1.101.Final", "5.3.20.RELEASE", "31.1-jre",
               "32.0.0-android", "32.0.0-jre"]
    assert [op for _, op, _ in maven_order(ordered)] == ["<"] * (len(ordered) - 1)
    assert all(compare("maven", a, b) < 0 for a, b in itertools.pairwise(ordered))
