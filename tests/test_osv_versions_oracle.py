"""The SemVer ordering key of repocontext/osv/versions.py held to the `semver` library's own precedence
(issue 43). PEP 440 ordering is packaging's Version itself; the `generic` scheme has no library to hold it to
(osv-scanner's per-ecosystem comparison fixtures are not vendored here)."""

from __future__ import annotations

import semver
from hypothesis import given, settings
from hypothesis import strategies as st

from repocontext.osv.versions import compare

IDENTIFIERS = st.sampled_from(["alpha", "beta", "rc", "0", "1", "2", "10", "a1", "x-y", "01a", "-"])
versions = st.builds(
    lambda core, pre, build: ".".join(map(str, core)) + (f"-{'.'.join(pre)}" if pre else "")
    + (f"+{build}" if build else ""),
    st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2)),
    st.lists(IDENTIFIERS, max_size=3),
    st.sampled_from(["", "", "build.1", "sha.5114f85"]),
)


@settings(max_examples=1000, deadline=None)
@given(a=versions, b=versions)
def test_semver_order_is_the_libraries(a: str, b: str) -> None:
    assert compare("semver", a, b) == semver.Version.parse(a).compare(b)
