"""render.block_tokens: one body counted once for several entry ids, and always the exact count."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from planner import tokens
from planner.bundle import render

# ids as the TCCMs make them (band:index:key, keys with filters and input values), plus odd ones
IDS = st.lists(
    st.one_of(
        st.builds(lambda b, i, k: f"{b}:{i}:{k}", st.sampled_from(["must_read", "should_read", "may_read"]),
                  st.integers(0, 40), st.text(min_size=1, max_size=30)),
        st.text(max_size=20),
    ),
    min_size=1, max_size=4, unique=True,
)
# bodies: rendered RepoContext values (the real shape), and any text at all (whitespace, newlines, "<|...|>")
VALUES = st.recursive(st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.text(max_size=12),
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                   max_size=4), max_leaves=20)
BODIES = st.one_of(VALUES.map(render.render_value), st.text(max_size=200),
                   st.sampled_from(["", "\n", " x\n", "\n\nx", "x\n\n", "]\n", "<|endoftext|>\n", "  - a\n"]))


@settings(max_examples=400, deadline=None)
@given(IDS, BODIES)
def test_block_tokens_equal_counting_each_block(ids: list[str], body: str) -> None:
    assert render.block_tokens(ids, body) == {i: tokens.count(render.block(i, body)) for i in ids}


def test_block_tokens_on_a_wide_real_shaped_slice() -> None:
    value = {f"pkg-{n}": {"declarations": [{"file": f"app{n % 7}/package-lock.json", "version": f"1.{n}.0",
                                            "hashes": ["sha512-" + "Ab+/" * 20]}]} for n in range(300)}
    body = render.render_value(value)
    ids = ["must_read:0:dependencies", "should_read:3:dependencies", "may_read:12:dependencies[name=x]"]
    assert render.block_tokens(ids, body) == {i: tokens.count(render.block(i, body)) for i in ids}
