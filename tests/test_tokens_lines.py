"""Cutting rendered text after whole lines: exact token counts without encoding the block again."""

from __future__ import annotations

import random

import pytest

from planner import tokens
from planner.bundle import render

PIECES = ["alpha", "Beta", "123", "4567", "'s", "'ll", " ", "  ", "\t", "\n", "\r\n", "\n\n", "{", "}", "[", "]",
          ":", ",", '"', "-", "...", "!?", "é", "日本", "\u00a0", "\u2028", "\u3000", "_x", "é'", "(a)", "ü1"]


def _text(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(1, 40)):
        body = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12)))
        lines.append(rng.choice(["", "- ", "  - ", '"k": ', "x"]) + body)
    text = "\n".join(lines) + rng.choice(["", "\n", "\n\n"])
    return text.lstrip() or "x"


def _safe_ends(text: str) -> list[int]:
    """Ends of lines followed by blanks (no CR/LF) and then a non-space character."""
    ends = []
    for i, c in enumerate(text):
        if c != "\n":
            continue
        rest = text[i + 1:]
        indent = len(rest) - len(rest.lstrip())
        if indent < len(rest) and not any(ch in "\r\n" for ch in rest[:indent]):
            ends.append(i + 1)
    return ends


@pytest.mark.parametrize("seed", range(6))
def test_line_cuts_count_exactly_and_keep_every_line_that_fits(seed: int) -> None:
    rng = random.Random(seed)
    frame = render.block("should_read:0:x", "", truncated=True)
    checked = 0
    for _ in range(80):
        text = _text(rng)
        limit = rng.randint(1, max(1, tokens.count(text) - 1))
        result = tokens.cut_at_line(text, limit)
        if result is None:
            assert text[0].isspace() or not any(tokens.count(text[:end]) <= limit for end in _safe_ends(text)) \
                or tokens.count(text) <= limit
            continue
        cut, used = result
        checked += 1
        assert text.startswith(cut) and cut.endswith("\n") and cut in [text[:end] for end in _safe_ends(text)]
        assert used == tokens.count(cut) <= limit
        assert tokens.count(render.block("should_read:0:x", cut, truncated=True)) == tokens.count(frame) + used
        longer = [end for end in _safe_ends(text) if end > len(cut)]
        assert not longer or tokens.count(text[:longer[0]]) > limit  # the next whole line would not fit
    assert checked > 20


def test_texts_that_cannot_be_cut_by_line_are_left_to_the_token_cut() -> None:
    assert tokens.cut_at_line(" starts with a space\nx\n" * 50, 10) is None
    assert tokens.cut_at_line("one very long line " * 200, 10) is None
    assert tokens.cut_at_line("short\n", 100) is None  # fits whole
