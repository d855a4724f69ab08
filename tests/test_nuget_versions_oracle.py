"""The `nuget` ordering (univers' NugetVersion, through repocontext.osv.versions) held to NuGet's documented
rules, written out here independently of it.

NuGet's own tool (dotnet / NuGet.Versioning) is not packaged for Debian, so the oracle is the rule text of
learn.microsoft.com "Package versioning" / NuGet.Versioning's VersionComparer: up to four numeric parts
(missing ones are 0: `1.0` == `1.0.0.0`); a release sorts above its pre-releases; pre-release labels compare
per SemVer 2 (dot-separated identifiers: numeric ones numerically and below alphanumeric ones, alphanumeric
ones case-insensitively, a shorter label below a longer one it starts); `+metadata` is ignored.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from repocontext.osv.versions import sort_key

_IDENTIFIERS = ("alpha", "Alpha", "beta", "BETA", "rc", "a1", "1", "2", "10", "preview")


def _oracle_key(version: str) -> tuple[tuple[int, ...], int, tuple[tuple[int, int, str], ...]]:
    core = version.split("+", 1)[0]
    numbers, _, label = core.partition("-")
    parts = tuple(int(p) for p in numbers.split("."))
    padded = parts + (0,) * (4 - len(parts))
    if not label:
        return padded, 1, ()
    identifiers = tuple((0, int(i), "") if i.isdigit() else (1, 0, i.lower()) for i in label.split("."))
    return padded, 0, identifiers


def _sign(a: Any, b: Any) -> int:
    return int(a > b) - int(a < b)


versions = st.builds(
    lambda parts, label, meta: ".".join(map(str, parts)) + (f"-{'.'.join(label)}" if label else "")
    + (f"+{meta}" if meta else ""),
    st.lists(st.integers(0, 3), min_size=1, max_size=4).filter(lambda p: len(p) >= 2 or p[0] > 0),
    st.lists(st.sampled_from(_IDENTIFIERS), max_size=3),
    st.sampled_from(["", "build.5", "sha.abc"]),
)


@settings(max_examples=300, deadline=None)
@given(versions, versions)
def test_nuget_order_follows_the_documented_rules(a: str, b: str) -> None:
    assert _sign(sort_key("nuget", a), sort_key("nuget", b)) == _sign(_oracle_key(a), _oracle_key(b)), (a, b)


def test_documented_examples() -> None:
    ordered = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
               "1.0.0-rc.1", "1.0.0", "1.0.0.1", "1.0.1", "8.0.5"]
    assert sorted(ordered, key=lambda v: sort_key("nuget", v)) == ordered
    assert sort_key("nuget", "1.0") == sort_key("nuget", "1.0.0.0") == sort_key("nuget", "1.0.0+build")
    assert sort_key("nuget", "1.0.0-RC.1") == sort_key("nuget", "1.0.0-rc.1")
