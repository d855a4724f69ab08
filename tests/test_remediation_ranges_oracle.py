"""The PEP 440 flavour of ranges.py held to packaging (issue 43): for random specifiers and fix versions,
an edit admits the fix and nothing below it, and keeps everything the module's contract says it keeps."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from subgraphs.vulnerability_remediation.ranges import SpecResult, require

releases = st.lists(st.integers(0, 3), min_size=1, max_size=3).map(lambda parts: ".".join(map(str, parts)))
suffixes = st.sampled_from(["", "", "", "", "rc1", "a1", ".post1", ".dev0"])
versions = st.builds(str.__add__, releases, suffixes)
wildcards = releases.map(lambda v: v + ".*")
OPS = ("==", "!=", "<=", "<", ">=", ">", "~=", "===")
UPPER_OPS = ("!=", "<=", "<")  # clauses that set no lower bound


@st.composite
def clauses(draw: st.DrawFn, ops: tuple[str, ...]) -> str:
    op = draw(st.sampled_from(ops))
    version = draw(wildcards if op in ("==", "!=") and draw(st.booleans()) else versions)
    return op + draw(st.sampled_from(["", "", " "])) + version


@st.composite
def specifiers(draw: st.DrawFn) -> str:
    ops = draw(st.sampled_from([OPS, UPPER_OPS]))  # half without a lower bound: the shape that drifted
    parts = draw(st.lists(clauses(ops), min_size=1, max_size=3))
    return draw(st.sampled_from([",", ", "])).join(parts)


def candidates(spec: str, target: str) -> set[Version]:
    """Versions around every bound the spec or the target names: each component -1/0/+1, each with
    pre-, post- and dev-release neighbours, so a bound off by one release or one suffix is seen."""
    found = {Version(target)}
    for text in re.findall(r"\d+(?:\.\d+)*", f"{spec} {target}"):
        parts = [int(p) for p in text.split(".")]
        for level in range(len(parts) + 1):
            for step in (-1, 0, 1):
                moved = [*parts, 0][: max(len(parts), level + 1)]
                moved[level] += step
                if moved[level] >= 0:
                    base = ".".join(map(str, moved))
                    found.update(Version(base + s) for s in ("", "rc1", "a1", ".post1", ".dev0"))
    return found


def admits(spec: SpecifierSet, version: Version) -> bool:
    return spec.contains(version, prereleases=True)


def check(spec: str, target: str) -> SpecResult:
    result = require(spec, target, "pep440")
    assert result.reasons  # every outcome says why
    old = SpecifierSet(spec)
    fix = Version(target)
    if result.status in ("fixed", "loose", "unsupported"):
        assert result.text == spec  # left as written
    if result.status == "unsupported":
        return result
    new = SpecifierSet(result.text)
    around = candidates(spec, target)
    lower_bound = any(s.operator in ("==", "===", ">=", ">", "~=") for s in old)
    if result.status == "loose":  # the documented loose case: no lower bound, and the fix already admitted
        assert not lower_bound and admits(old, fix)
        return result
    below = sorted(v for v in around if v < fix and admits(new, v))
    assert not below, f"{spec!r} → {result.text!r} still admits {below[0]} (fix {target})"
    if result.status == "fixed":
        return result
    assert admits(new, fix), f"{spec!r} → {result.text!r} does not admit the fix {target}"
    lost = sorted(v for v in around if v >= fix and admits(old, v) and not admits(new, v))
    assert not lost, f"{spec!r} → {result.text!r} no longer admits {lost[0]}, which it did"
    for clause in old:  # an upper bound or exclusion that already admitted the fix stays as written
        if clause.operator in ("!=", "<", "<=") and clause.contains(fix, prereleases=True):
            assert str(clause) in {str(s) for s in new}, f"{spec!r} → {result.text!r} lost `{clause}`"
    return result


@settings(max_examples=1500, deadline=None)
@given(spec=specifiers(), target=versions)
@example(spec="!=0,<=2,<0.3.0", target="0.3.0")  # the drift of issue 43: became `…<0.4.0`, which admits 0.2
@example(spec="<1", target="1a1")  # `<1` excludes 1's pre-releases: not "loose"
@example(spec="!=3.*", target="3.dev0")  # a wildcard exclusion covers 3's dev releases
@example(spec="==0.*", target="0")  # ... and a wildcard match admits them: 0.dev0 is below 0
def test_an_edit_admits_the_fix_and_nothing_below_it(spec: str, target: str) -> None:
    try:
        SpecifierSet(spec)
    except InvalidSpecifier:  # e.g. `~=2`: not PEP 440, and the module says so
        assert require(spec, target, "pep440").status == "unsupported"
        return
    check(spec, target)


def test_the_floor_keeps_the_spec_separators() -> None:
    assert require("!=0, <=2, <0.3.0", "0.3.0", "pep440").text == ">=0.3.0, !=0, <=2, <0.4.0"
    assert require(" <2.31", "2.31.0", "pep440").text == " >=2.31.0,<2.32"
    assert require("<2.31", "2.31.0", "poetry").text == ">=2.31.0 <2.32"
    assert require("<1.5.0", "1.5.0", "npm").text == ">=1.5.0 <1.6.0"
    assert require("!=2.31.0", "2.31.0", "pep440").reasons[0] == (
        "`!=2.31.0` set no lower bound; added `>=2.31.0` so nothing below 2.31.0 is allowed")
