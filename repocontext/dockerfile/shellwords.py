"""Shell text → words and operators with their offsets, for editing RUN commands in place.

Two modes. "head": the text of a RUN instruction as written in the Dockerfile,
where every newline is a line continuation, a skipped comment line or the final
line end (Docker joins the instruction into one logical line), so newlines never
separate commands. "script": a heredoc body run by a shell, where an unescaped
newline separates commands. In both, backslash-newline continues a line, quotes,
`$(…)`, `${…}` and backticks keep a word together, `#` at a word start comments
to the end of the line, and `&&`, `||`, `;`, `|`, `&`, `(`, `)` separate commands.
Redirections (`2>&1`, `>/dev/null`) stay inside words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from repocontext.dockerfile.words import unquote

_OPERATORS = ("&&", "||", ";;", ";", "|", "&", "(", ")")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# Docker continues a line on a backslash followed by blanks (moby trims them): `\ ` at a line end is not an
# escaped space in a RUN as written ("head" mode); in a heredoc script the shell's rule applies.
_HEAD_CONTINUATION = re.compile(r"\\[ \t]+\r?\n")
PREFIX_WORDS = frozenset({"then", "do", "else", "elif", "if", "while", "until", "!", "{", "time", "command", "exec"})


@dataclass(frozen=True)
class Token:
    kind: Literal["word", "op"]
    text: str  # unquoted word, or the operator ("\n" for a separating newline)
    raw: str
    start: int
    end: int


@dataclass
class Command:
    """One simple command: its words and the operator that ends it (None at the end of the text)."""

    words: list[Token] = field(default_factory=list)
    op: Token | None = None

    @property
    def start(self) -> int:
        return self.words[0].start

    @property
    def end(self) -> int:
        return self.words[-1].end


def tokenize(text: str, mode: Literal["head", "script"] = "script") -> list[Token]:
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if text.startswith(("\\\n", "\\\r\n"), i):
            i += 2 if text[i + 1] == "\n" else 3
        elif mode == "head" and (m := _HEAD_CONTINUATION.match(text, i)):
            i = m.end()
        elif ch == "\n":
            if mode == "script":
                tokens.append(Token("op", "\n", "\n", i, i + 1))
            i += 1
        elif ch.isspace():
            i += 1
        elif ch == "#":
            while i < n and text[i] != "\n":
                i += 1
        elif op := next((o for o in _OPERATORS if text.startswith(o, i) and not _redirect_amp(text, i)), None):
            tokens.append(Token("op", op, op, i, i + len(op)))
            i += len(op)
        else:
            end = _word_end(text, i, mode)
            tokens.append(Token("word", unquote(text[i:end]), text[i:end], i, end))
            i = end
    return tokens


def _redirect_amp(text: str, i: int) -> bool:
    """`&` that belongs to a redirection (`2>&1`, `&>file`) rather than being an operator."""
    return text[i] == "&" and ((i > 0 and text[i - 1] in "<>") or text.startswith("&>", i))


def _word_end(text: str, i: int, mode: str = "script") -> int:
    quote, depth, n = "", 0, len(text)
    while i < n:
        ch = text[i]
        if mode == "head" and not quote and _HEAD_CONTINUATION.match(text, i):
            return i
        if ch == "\\" and quote != "'" and i + 1 < n:
            if not quote and text[i + 1] in "\r\n":
                return i
            i += 2
            continue
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
        elif ch == "$" and text.startswith(("$(", "${"), i):
            depth += 1
            i += 1
        elif ch == "(" and depth:  # `$(( 1 + 2 ))`, `$(f (x))`: inner parentheses close before the word does
            depth += 1
        elif ch in ")}" and depth:
            depth -= 1
        elif depth == 0 and (ch.isspace() or (ch in "&|;()" and not _redirect_amp(text, i))):
            return i
        i += 1
    return i


def commands(tokens: list[Token]) -> list[Command]:
    out: list[Command] = [Command()]
    for token in tokens:
        if token.kind == "op":
            if out[-1].words:
                out[-1].op = token
                out.append(Command())
        else:
            out[-1].words.append(token)
    return [c for c in out if c.words]


def command_index(words: list[Token]) -> int | None:
    """Index of the program word, skipping assignments, shell keywords and sudo (with its options)."""
    k = 0
    while k < len(words):
        text = words[k].text
        if _ASSIGNMENT.match(text) or text in PREFIX_WORDS:
            k += 1
        elif text == "sudo":
            k += 1
            while k < len(words) and words[k].text.startswith("-"):
                k += 1
        else:
            return k
    return None


def is_assignment(word: str) -> bool:
    return _ASSIGNMENT.match(word) is not None
