"""Line numbers of JSON object keys, scoped to their parent object."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from repocontext.deps import json_lines
from repocontext.deps.json_lines import ELEMENT, key_lines, nested_key_lines, parsed_key_lines

TEXT = """\
{
  "name": "x",
  "dependencies": {"a": "1", "b\\"q": "2"},
  "list": [
    {"a": 1},
    [1, {"deep": true}]
  ],
  "packages": {
    "": {"dependencies": {"a": "^1"}},
    "node_modules/a": {
      "version": "1"
    }
  }
}
"""


def test_key_paths() -> None:
    lines = key_lines(TEXT)
    assert lines[("name",)] == 2
    assert lines[("dependencies", "a")] == 3
    assert lines[("dependencies", 'b"q')] == 3
    assert lines[("list", ELEMENT, "a")] == 5
    assert lines[("list", ELEMENT, ELEMENT, "deep")] == 6
    assert lines[("packages", "", "dependencies", "a")] == 9
    assert lines[("packages", "node_modules/a")] == 10
    assert lines[("packages", "node_modules/a", "version")] == 11
    assert ("a",) not in lines


def test_broken_json_does_not_raise() -> None:
    assert key_lines('{"a": {"b": ]]] "c": 1') == {("a",): 1, ("a", "b"): 1}


def test_the_unrolled_token_pattern_tokenizes_as_the_plain_one() -> None:
    """The string body is matched as runs between escapes for speed; it must cut text exactly where
    `"((?:[^"\\]|\\.)*)"` does, escapes, unterminated strings and newlines included."""
    plain = re.compile(r'"((?:[^"\\]|\\.)*)"(\s*:)?|[{}\[\]]')
    rng = random.Random(7)
    alphabet = ['"', "\\", "a", ":", " ", "{", "}", "[", "]", "\n", "é", ","]
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        expected = [m.group(0, 1, 2) for m in plain.finditer(text)]
        assert [m.group(0, 1, 2) for m in json_lines._TOKEN.finditer(text)] == expected, text


_KEYS = st.text(alphabet=st.sampled_from(['a', 'b', '"', "\\", "\n", "é", ":", "{", " ", "\u2028", "\x01"]), max_size=4)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | _KEYS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=30,
)


def _prints(value: Any) -> list[str]:
    """The layouts a JSON file comes in: npm's two-space print (with and without the final newline), other
    indents, compact, CRLF line ends; only the first two take the structural path."""
    try:
        pretty = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except orjson.JSONEncodeError:  # integers beyond 64 bits
        pretty = json.dumps(value, indent=2, ensure_ascii=False)
    return [pretty, pretty + "\n", json.dumps(value, indent=4), json.dumps(value), pretty.replace("\n", "\r\n")]


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_parsed_key_lines_agree_with_the_tokenizer(value: Any) -> None:
    for text in _prints(value):
        for depth in (1, 2, 3, 64):
            assert parsed_key_lines(text, json.loads(text), depth) == key_lines(text, depth), (text, depth)


def test_parsed_key_lines_on_lockfile_shapes() -> None:
    lock = {"lockfileVersion": 1, "requires": True, "dependencies": {
        "a": {"version": "1", "requires": {"b": "^2"}, "dependencies": {"b": {"version": "2", "dev": True}}},
        "c": {"version": "3", "requires": {}, "bin": []},
    }}
    text = orjson.dumps(lock, option=orjson.OPT_INDENT_2).decode() + "\n"
    lines = parsed_key_lines(text, lock)
    assert lines == key_lines(text)
    assert lines[("dependencies", "a", "dependencies", "b")] == 11
    assert lines[("dependencies", "c")] == 17
    duplicated = '{\n  "a": 1,\n  "a": 2\n}'  # the print of the parsed object has one "a": tokenized
    assert parsed_key_lines(duplicated, json.loads(duplicated)) == {("a",): 2}


def _dependency_tree(draw: st.DrawFn, depth: int) -> dict[str, Any]:
    names = draw(st.lists(st.text(min_size=1, max_size=4), max_size=3, unique=True))
    tree: dict[str, Any] = {}
    for name in names:
        entry: dict[str, Any] = {"version": draw(st.sampled_from(["1.0.0", "2.1.3"]))}
        if draw(st.booleans()):
            entry["requires"] = draw(st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2))
        if draw(st.booleans()):
            entry["bin"] = draw(st.lists(st.integers(0, 9), max_size=2))
        if depth and draw(st.booleans()):
            entry["dependencies"] = _dependency_tree(draw, depth - 1)
        tree[name] = entry
    return tree


@st.composite
def _v1_locks(draw: st.DrawFn) -> dict[str, Any]:
    return {"name": "x", "lockfileVersion": 1, "requires": True, "dependencies": _dependency_tree(draw, 3),
            "other": draw(st.sampled_from([{}, [], {"dependencies": {"z": {}}}]))}


@settings(max_examples=300, deadline=None)
@given(_v1_locks())
def test_nested_key_lines_agree_with_the_tokenizer_on_every_dependency_path(lock: dict[str, Any]) -> None:
    """On the paths an npm v1 lockfile's reader asks for, the structure walk gives the tokenizer's lines."""
    text = orjson.dumps(lock, option=orjson.OPT_INDENT_2).decode() + "\n"
    found = nested_key_lines(text, lock, "dependencies")
    everything = key_lines(text)
    wanted = {path: line for path, line in everything.items()
              if len(path) % 2 == 0 and all(path[i] == "dependencies" for i in range(0, len(path), 2))}
    assert found == wanted
    compact = json.dumps(lock)  # not the two-space print: tokenized, every key path
    assert nested_key_lines(compact, lock, "dependencies") == key_lines(compact)
