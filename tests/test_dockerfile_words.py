"""Docker's word rules: splitting, unquoting, builder flags, exec form and ARG expansion."""

from __future__ import annotations

import pytest

from repocontext.dockerfile.words import (
    expand,
    extract_flags,
    is_json_non_string_array,
    parse_exec,
    split_words,
    unquote,
)


def test_split_words_keeps_quotes_and_escapes() -> None:
    words = split_words("""a="b c" 'd e'\\ f g\\ h "i\\"j" """)
    assert [w.text for w in words] == ['a="b c"', "'d e'\\ f", "g\\ h", '"i\\"j"']
    assert [w.start for w in words] == [0, 8, 17, 22]
    assert [w.text for w in split_words("a` b c", escape="`")] == ["a` b", "c"]


def test_unquote() -> None:
    assert unquote('"a \\"b\\" \\n"') == 'a "b" \\n'
    assert unquote("'a\\b'c\\ d") == "a\\bc d"
    assert unquote("C:\\dir", escape="`") == "C:\\dir"


def test_extract_flags() -> None:
    flags, offset = extract_flags(' --from=build --chown="app user" --link /a /b')
    assert flags == [("from", "build"), ("chown", "app user"), ("link", None)]
    assert offset == 40
    assert extract_flags("--mount=a -- --not-a-flag x") == ([("mount", "a")], 13)
    assert extract_flags("  plain --x") == ([], 2)


def test_parse_exec() -> None:
    assert parse_exec('["sh", "-c", "echo \\"hi\\""]') == ["sh", "-c", 'echo "hi"']
    assert parse_exec("[not json]") is None and parse_exec("echo [1]") is None
    assert parse_exec('["a", 1]') is None and is_json_non_string_array('["a", 1]')
    assert not is_json_non_string_array("[x")


@pytest.mark.parametrize(("text", "expected"), [
    ("python:${V}-slim", ("python:3.12-slim", [])),
    ("python:$V", ("python:3.12", [])),
    ("$UNSET", (None, ["UNSET"])),
    ("${EMPTY:-fallback}", ("fallback", [])),
    ("${EMPTY-fallback}", ("", [])),
    ("${DECLARED:-x}", ("x", [])),
    ("${DECLARED-x}", ("x", [])),
    ("${V:+set}", ("set", [])),
    ("${EMPTY:+set}", ("", [])),
    ("${DECLARED:+set}", (None, ["DECLARED"])),
    ("${OTHER:-${V}}", ("3.12", [])),
    ("${V%.*}", (None, ["V%.*"])),
    ("${V:?required}", ("3.12", [])),
    ("cost\\$5 $", ("cost$5 $", [])),
    ("${unclosed", (None, [])),
])
def test_expand(text: str, expected: tuple[str | None, list[str]]) -> None:
    env: dict[str, str | None] = {"V": "3.12", "EMPTY": "", "DECLARED": None}
    assert expand(text, env) == expected
