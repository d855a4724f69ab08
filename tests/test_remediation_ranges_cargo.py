"""Cargo requirements: `ranges_cargo.admits` held to cargo itself, and the rewrite rule on its own terms.

cargo decides offline whether a requirement matches: a throwaway crate depends on a path crate at the
generated version with the generated requirement, and `cargo metadata --offline` fails to select a version
when the requirement does not match it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subgraphs.vulnerability_remediation.ranges_cargo import CargoReqError, admits, parse, require


def _cargo() -> str | None:
    found = shutil.which("cargo")
    home = Path.home() / ".cargo" / "bin" / "cargo"
    return found or (str(home) if home.is_file() else None)


CARGO = _cargo()
needs_cargo = pytest.mark.skipif(CARGO is None, reason="cargo is not installed")


class Oracle:
    """One crate pair in a temporary folder, rewritten per question."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for name in ("dep", "app"):
            (root / name / "src").mkdir(parents=True, exist_ok=True)
            (root / name / "src" / "lib.rs").write_text("")
        self.env = {**os.environ, "CARGO_HOME": str(root / "home"), "CARGO_NET_OFFLINE": "true"}

    def matches(self, req: str, version: str) -> bool:
        (self.root / "dep" / "Cargo.toml").write_text(
            f'[package]\nname = "dep"\nversion = "{version}"\nedition = "2021"\n')
        (self.root / "app" / "Cargo.toml").write_text(
            '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
            f'dep = {{ path = "../dep", version = "{req}" }}\n')
        (self.root / "app" / "Cargo.lock").unlink(missing_ok=True)
        done = subprocess.run([str(CARGO), "metadata", "--offline", "--format-version", "1"],
                              cwd=self.root / "app", env=self.env, capture_output=True, text=True, timeout=60)
        if done.returncode == 0:
            return True
        assert "failed to select a version" in done.stderr, done.stderr  # any other failure is the test's own
        return False


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Oracle:
    return Oracle(tmp_path_factory.mktemp("cargo-oracle"))


EXAMPLES = [
    ("1.2", "1.2.5"), ("1.2", "2.0.0"), ("1.2", "1.1.9"), ("0.3", "0.3.9"), ("0.3", "0.4.0"), ("0.0.3", "0.0.4"),
    ("^0.0", "0.0.7"), ("^0", "0.9.0"), ("~1.2.3", "1.2.9"), ("~1.2.3", "1.3.0"), ("~1", "1.9.0"),
    ("=1.2", "1.2.7"), ("=1.2.3", "1.2.4"), (">1.2", "1.2.9"), (">1.2", "1.3.0"), ("<=1.2", "1.2.9"),
    ("<1.2", "1.2.0"), ("1.2.*", "1.2.9"), ("1.*", "1.9.1"), ("*", "3.0.0"), (">= 1.0, < 1.4", "1.3.9"),
    ("1.2.3", "1.2.4-alpha"), (">=1.2.3-alpha", "1.2.3-beta"), (">=1.2.3-alpha", "1.2.4-beta"),
    ("^1.2.3-beta.2", "1.2.3-beta.11"), ("^1.2.3-beta", "1.2.3-alpha"), ("1.2.3-rc.1", "1.2.3"),
]


@needs_cargo
@pytest.mark.parametrize(("req", "version"), EXAMPLES)
def test_admits_agrees_with_cargo_on_examples(oracle: Oracle, req: str, version: str) -> None:
    assert admits(req, version) is oracle.matches(req, version)


_NUM = st.integers(0, 3)
_PRE = st.sampled_from(["", "", "", "alpha", "alpha.1", "beta", "1", "rc.2"])
_OPS = st.sampled_from(["", "^", "~", "=", ">", ">=", "<", "<="])


@st.composite
def versions(draw: st.DrawFn) -> str:
    pre = draw(_PRE)
    return f"{draw(_NUM)}.{draw(_NUM)}.{draw(_NUM)}" + (f"-{pre}" if pre else "")


@st.composite
def comparators(draw: st.DrawFn) -> str:
    width = draw(st.integers(1, 3))
    parts = [str(draw(_NUM)) for _ in range(width)]
    if width > 1 and draw(st.integers(0, 5)) == 0:
        return ".".join([*parts[:-1], "*"])
    pre = draw(_PRE) if width == 3 else ""
    return draw(_OPS) + ".".join(parts) + (f"-{pre}" if pre else "")


requirements = st.lists(comparators(), min_size=1, max_size=2).map(", ".join)


@needs_cargo
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(req=requirements, version=versions())
def test_admits_agrees_with_cargo(oracle: Oracle, req: str, version: str) -> None:
    assert admits(req, version) is oracle.matches(req, version)


@settings(max_examples=300, deadline=None)
@given(req=requirements, target=versions(), below=versions())
def test_rewrite_admits_the_target_and_nothing_below_it(req: str, target: str, below: str) -> None:
    """An edit requires the target or later: the new requirement admits it, and no version below it."""
    result = require(req, target)
    if result.status == "edited":
        assert admits(result.text, target)
        from repocontext.osv.versions import sort_key
        if sort_key("semver", below) < sort_key("semver", target):
            assert not admits(result.text, below)
    elif result.status == "fixed":
        assert result.text == req


@pytest.mark.parametrize(("req", "target", "status", "new"), [
    ("1.2", "1.2.5", "edited", "1.2.5"),
    ("0.3", "0.4.2", "edited", "0.4.2"),
    ("~0.3", "0.4.0", "edited", "~0.4"),
    ("^1.2", "1.3.0", "edited", "^1.3"),
    ("=1.2.3", "1.2.5", "edited", "=1.2.5"),
    (">1.0", "1.2.5", "edited", ">=1.2.5"),
    (">= 1.0, <1.2", "1.2.5", "edited", ">= 1.2.5, <1.3"),
    ("1.2.*", "1.2.5", "edited", "~1.2.5"),
    ("<1.2", "1.2.5", "edited", ">=1.2.5, <1.3"),
    ("*", "1.0.0", "loose", "*"),
    ("1.3", "1.2.5", "fixed", "1.3"),
    ("^1.2.6", "1.2.5", "fixed", "^1.2.6"),
    ("1.2 || 2", "1.2.5", "unsupported", "1.2 || 2"),
])
def test_rewrite_keeps_the_operator_style(req: str, target: str, status: str, new: str) -> None:
    result = require(req, target)
    assert (result.status, result.text) == (status, new)


def test_unreadable_requirements_raise() -> None:
    for bad in ("1.2-alpha", ">=1.*", "latest", "1.2.3.4"):
        with pytest.raises(CargoReqError):
            parse(bad)


_IDENT = st.one_of(st.integers(0, 20).map(str), st.from_regex(r"[a-zA-Z][a-zA-Z0-9-]{0,5}", fullmatch=True))
_PRERELEASE = st.lists(_IDENT, min_size=1, max_size=3).map(".".join)


@needs_cargo
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(low=_PRERELEASE, high=st.one_of(st.just(""), _PRERELEASE), base=st.sampled_from(["0.1.0", "1.2.3", "2.0.0"]))
def test_semver_ordering_agrees_with_cargo(oracle: Oracle, low: str, high: str, base: str) -> None:
    """versions.py's SemVer precedence of pre-releases, as cargo orders them: `>=A` (A a pre-release) admits B of
    the same major.minor.patch exactly when B sorts at or above A."""
    from repocontext.osv.versions import sort_key

    a, b = f"{base}-{low}", f"{base}-{high}" if high else base
    assert oracle.matches(f">={a}", b) is bool(sort_key("semver", b) >= sort_key("semver", a))
