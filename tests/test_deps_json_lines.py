"""Line numbers of JSON object keys, scoped to their parent object."""

from __future__ import annotations

import random
import re

from repocontext.deps import json_lines
from repocontext.deps.json_lines import ELEMENT, key_lines

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
