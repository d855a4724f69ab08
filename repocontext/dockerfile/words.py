"""Word-level helpers with Docker's semantics: quote-aware splitting, flags, exec form, ARG expansion."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from repocontext import bounded

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-+?])(.*))?\Z", re.DOTALL)


@dataclass(frozen=True)
class Word:
    text: str  # raw: quotes and escapes kept
    start: int  # offset in the split string


def split_words(text: str, escape: str = "\\") -> list[Word]:
    """Whitespace-separated words; quotes and the escape char protect spaces and are kept in the word."""
    words: list[Word] = []
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        start, quote = i, ""
        while i < n and (quote or not text[i].isspace()):
            ch = text[i]
            if ch == escape and quote != "'" and i + 1 < n:
                i += 2
                continue
            if quote and ch == quote:
                quote = ""
            elif not quote and ch in "'\"":
                quote = ch
            i += 1
        words.append(Word(text[start:i], start))
    return words


def unquote(word: str, escape: str = "\\") -> str:
    """The word with quotes removed and escapes resolved (no variable expansion)."""
    out: list[str] = []
    i, n, quote = 0, len(word), ""
    while i < n:
        ch = word[i]
        if quote == "'":
            if ch == "'":
                quote = ""
            else:
                out.append(ch)
        elif ch == escape and i + 1 < n:
            nxt = word[i + 1]
            # inside double quotes only a few characters are escapable, as in sh
            if quote == '"' and nxt not in ('"', "$", "`", escape):
                out.append(ch)
            out.append(nxt)
            i += 1
        elif quote == '"' and ch == '"':
            quote = ""
        elif not quote and ch in "'\"":
            quote = ch
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def extract_flags(text: str) -> tuple[list[tuple[str, str | None]], int]:
    """Leading `--name[=value]` words and the offset where the arguments begin.

    Like Docker, flag words are unquoted with a backslash escape regardless of the
    escape directive, and a lone `--` ends the flags.
    """
    flags: list[tuple[str, str | None]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if not text.startswith("--", i):
            return flags, i
        end = i
        quote = ""
        while end < n and (quote or not text[end].isspace()):
            if text[end] == "\\" and end + 1 < n:
                end += 2
                continue
            if quote and text[end] == quote:
                quote = ""
            elif not quote and text[end] in "'\"":
                quote = text[end]
            end += 1
        word = unquote(text[i:end])
        if word == "--":
            while end < n and text[end].isspace():
                end += 1
            return flags, end
        name, eq, value = word[2:].partition("=")
        flags.append((name, value if eq else None))
        i = end


def _json_array(text: str) -> list[Any] | None:
    """`text` as a JSON array, or None when it is not one (Docker then reads it as shell form)."""
    if not text.startswith("["):
        return None
    try:
        value = bounded.json_loads(text)  # `[[[[…` a million deep would end json.loads in RecursionError
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def parse_exec(text: str) -> list[str] | None:
    """The argv of a JSON exec form, or None when `text` is not a valid JSON array of strings.

    Docker treats anything that is not a JSON array as shell form; an array with
    non-string items is an error in Docker, which the caller reports.
    """
    value = _json_array(text)
    return value if value is not None and all(isinstance(v, str) for v in value) else None


def is_json_non_string_array(text: str) -> bool:
    value = _json_array(text)
    return value is not None and not all(isinstance(v, str) for v in value)


def expand(text: str, env: dict[str, str | None], escape: str = "\\") -> tuple[str | None, list[str]]:
    """Substitute `$VAR`, `${VAR}` and `${VAR:-word}`-style forms from `env`.

    Returns (result, unresolved names). The result is None when a variable without a
    known value is used where no default applies; a None value in `env` means
    declared without a default.
    """
    missing: list[str] = []
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == escape and i + 1 < n:
            out.append(text[i + 1])
            i += 2
            continue
        if ch != "$" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        if text[i + 1] == "{":
            close = _matching_brace(text, i + 2)
            if close < 0:
                return None, sorted(set(missing))
            piece = _expand_braced(text[i + 2 : close], env, escape, missing)
            i = close + 1
        else:
            m = _NAME.match(text, i + 1)
            if not m:
                out.append(ch)
                i += 1
                continue
            piece = env.get(m.group(0))
            if piece is None:
                missing.append(m.group(0))
            i = m.end()
        if piece is not None:
            out.append(piece)
    unresolved = sorted(set(missing))
    return (None if unresolved else "".join(out)), unresolved


def _matching_brace(text: str, start: int) -> int:
    depth = 1
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _expand_braced(body: str, env: dict[str, str | None], escape: str, missing: list[str]) -> str | None:
    m = _BRACED.match(body)
    if not m:  # unsupported modifier (#, %, /): leave unresolved
        missing.append(body)
        return None
    name, op, word = m.group(1), m.group(2), m.group(3) or ""
    value = env.get(name)
    is_set = value is not None
    set_and_nonempty = is_set and value != ""
    if op in (":-", "-"):
        use_default = not set_and_nonempty if op == ":-" else not is_set
        if not use_default:
            return value
        result, sub_missing = expand(word, env, escape)
        missing.extend(sub_missing)
        return result
    if op in (":+", "+"):
        if not is_set:  # unknown: a build arg may set it
            missing.append(name)
            return None
        if op == ":+" and not set_and_nonempty:
            return ""
        result, sub_missing = expand(word, env, escape)
        missing.extend(sub_missing)
        return result
    if value is None:
        missing.append(name)
    return value
