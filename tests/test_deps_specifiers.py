"""The plain specifier reader: every answer it gives is packaging's, and it leaves the rest to packaging."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from repocontext.deps.common import _packaging_specifiers, exact_pep440
from repocontext.deps.specifiers import exact_version, plain_specifiers, settled

_OPERATORS = ["==", "===", "!=", "~=", "<=", ">=", "<", ">", "=", ""]
_VERSION_PIECES = ["1", "0", "12", ".", ".*", "*", "a", "b", "rc", "c", "alpha", "pre", "post", "dev", "r", "-",
                   "_", "+", "local", "v", "!", "RC", "Post", "ı", ";", ")", "x"]
_SPECIFIER = st.tuples(st.sampled_from(["", " "]), st.sampled_from(_OPERATORS), st.sampled_from(["", " "]),
                       st.lists(st.sampled_from(_VERSION_PIECES), max_size=7).map("".join)).map("".join)


@settings(max_examples=2000, deadline=None)
@given(st.lists(_SPECIFIER, max_size=3).map(",".join))
def test_every_plain_answer_is_packagings(text: str) -> None:
    ours = plain_specifiers(text)
    theirs = _packaging_specifiers(text)
    if ours is not None:
        assert theirs is not None, text  # never valid here and rejected by packaging
        if len(ours) <= 1:
            assert ours == theirs
        else:  # packaging 24 keeps several in a set; 26 in order
            assert set(theirs) <= set(ours)
        if settled(ours):
            assert exact_version(ours) == exact_version(theirs)
    assert exact_pep440(text) == (exact_version(theirs) if theirs is not None else None)


def test_the_common_shapes_are_read_here_and_the_rest_left_to_packaging() -> None:
    taken = {"==2.31.0": [("==", "2.31.0")], ">=4.2, <5": [(">=", "4.2"), ("<", "5")], "~= 5.3": [("~=", "5.3")],
             "==1.0.*": [("==", "1.0.*")], "!=1.0+ubuntu.1": [("!=", "1.0+ubuntu.1")], "": [],
             "==2.0rc1.post2.dev3": [("==", "2.0rc1.post2.dev3")], "===weird-1": [("===", "weird-1")],
             ">=1,": [(">=", "1")]}
    for text, pairs in taken.items():
        assert plain_specifiers(text) == pairs, text
    left = ["==1.0RC1", "~=1", ">=1.0.*", "<1.0+local", "==v1.0", "==1!2.0", "==1.0-1", "=1.0", "1.0", "==1.0a"]
    assert [text for text in left if plain_specifiers(text) is not None] == []
    assert [exact_pep440(text) for text in ("==1.0RC1", "==v1.0", "==1!2.0", "~=1")] == ["1.0RC1", "v1.0", "1!2.0",
                                                                                          None]
    assert [settled(plain_specifiers(t) or []) for t in ("==1,==1.0", ">=1,<2", "==1")] == [False, True, True]
