"""Packagist versions and constraints held to PHP's composer/semver (Debian's php-composer-semver, which
`apt-get install composer php-cli` brings): normalisation, order and `Semver::satisfies` on generated
versions and constraints, and the real advisory versions univers misorders."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repocontext.osv.composer_constraints import satisfies
from repocontext.osv.composer_versions import ComposerVersionError, compare_key, normalize
from repocontext.osv.versions import compare, is_prerelease, release_line

ORACLE = Path(__file__).with_name("composer_semver_oracle.php")
AUTOLOADS = (Path("/usr/share/php/Composer/Semver/autoload.php"),)


def _autoload() -> Path:
    if shutil.which("php") is None:
        pytest.skip("php is not installed (apt-get install -y composer php-cli)")
    found = next((p for p in AUTOLOADS if p.exists()), None)
    if found is None:
        pytest.skip("composer/semver is not installed (apt-get install -y composer php-cli)")
    return found


def _php(lines: list[str]) -> list[str]:
    done = subprocess.run(["php", str(ORACLE), str(_autoload())], input="".join(f"{x}\n" for x in lines),
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.splitlines()


def _mine_normalize(version: str) -> str:
    try:
        return normalize(version)
    except ComposerVersionError:
        return "ERR"


def _mine_compare(a: str, b: str) -> str:
    try:
        ka, kb = compare_key(normalize(a)), compare_key(normalize(b))
    except ComposerVersionError:
        return "ERR"
    return str((ka > kb) - (ka < kb))


def _mine_satisfies(version: str, constraint: str) -> str:
    try:
        return "1" if satisfies(version, constraint) else "0"
    except ComposerVersionError:
        return "ERR"


_NUM = st.sampled_from(["0", "1", "2", "3", "10", "9999999"])
_SUFFIX = st.sampled_from(["", "", "", "-beta1", "-beta", "-RC2", "RC1", "-alpha.3", "-p2", "-patch1", "-pl1",
                           "-dev", ".x-dev", "-beta1-dev", "+build.5", "-stable", "b2", "a1"])


@st.composite
def versions(draw: st.DrawFn) -> str:
    parts = draw(st.lists(_NUM, min_size=1, max_size=4))
    return draw(st.sampled_from(["", "", "v"])) + ".".join(parts) + draw(_SUFFIX)


@st.composite
def clauses(draw: st.DrawFn) -> str:
    form = draw(st.sampled_from(["op", "op", "op", "wild", "hyphen", "any", "flag"]))
    if form == "wild":
        return ".".join(draw(st.lists(_NUM, min_size=1, max_size=3))) + draw(st.sampled_from([".*", ".x"]))
    if form == "hyphen":
        return f"{draw(versions())} - {draw(versions())}"
    if form == "any":
        return draw(st.sampled_from(["*", "x", "v*", "*.*"]))
    op = draw(st.sampled_from(["", "=", "==", "!=", "<>", ">", ">=", "<", "<=", "^", "~", "> "]))
    flag = draw(st.sampled_from(["@dev", "@beta", "@stable", "@RC"])) if form == "flag" else ""
    return op + draw(versions()) + flag


@st.composite
def constraints(draw: st.DrawFn) -> str:
    groups = [draw(st.sampled_from([" ", ",", ", "])).join(draw(st.lists(clauses(), min_size=1, max_size=2)))
              for _ in range(draw(st.integers(1, 2)))]
    return draw(st.sampled_from([" || ", "||", "|", " | "])).join(groups)


_SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.large_base_example, HealthCheck.data_too_large])


@_SETTINGS
@given(st.lists(versions(), min_size=40, max_size=40))
def test_normalize_agrees_with_composer(batch: list[str]) -> None:
    assert [_mine_normalize(v) for v in batch] == _php([f"n\t{v}" for v in batch])


@_SETTINGS
@given(st.lists(st.tuples(versions(), versions()), min_size=40, max_size=40))
def test_order_agrees_with_composer(batch: list[tuple[str, str]]) -> None:
    assert [_mine_compare(a, b) for a, b in batch] == _php([f"c\t{a}\t{b}" for a, b in batch])


@_SETTINGS
@given(st.lists(st.tuples(versions(), constraints()), min_size=40, max_size=40))
def test_satisfies_agrees_with_composer(batch: list[tuple[str, str]]) -> None:
    mine = [_mine_satisfies(v, c) for v, c in batch]
    theirs = _php([f"s\t{v}\t{c}" for v, c in batch])
    assert [(v, c, m) for (v, c), m in zip(batch, mine, strict=True)] == \
           [(v, c, t) for (v, c), t in zip(batch, theirs, strict=True)]


# Versions the Packagist advisories write (FriendsOfPHP records) that a SemVer reading misorders.
REAL = [("2.3.2", "2.3.2-p2"), ("1.0.0-beta2", "1.0.0-RC1"), ("1.14.4", "1.14.4.1"), ("2017.12.0", "2017.12.0.1"),
        ("7.58", "7.59"), ("v1.2.6", "1.2.7"), ("6.4.5", "6.4.x-dev")]


@pytest.mark.parametrize(("low", "high"), REAL)
def test_real_advisory_versions_order(low: str, high: str) -> None:
    assert compare("composer", low, high) == -1
    assert compare("composer", high, low) == 1
    assert _php([f"c\t{low}\t{high}"]) == ["-1"]


def test_v_prefix_is_the_same_version_and_patch_is_no_prerelease() -> None:
    assert compare("composer", "v5.4.21", "5.4.21") == 0
    assert is_prerelease("composer", "1.0.0-RC1") and not is_prerelease("composer", "2.3.2-p2")
    assert release_line("composer", "v2.3.2-p2") == (2,)
