"""Text edits of FROM and ARG instructions that change only the image word (or one ARG default)."""

from __future__ import annotations

import re

from repocontext.dockerfile.parser import parse
from repocontext.dockerfile.words import split_words
from repocontext.model import Instruction, Stage

_FROM = re.compile(r"(\s*\S+(?:\s+--\S+)*\s+)(\S+)")
_ARG_ONLY = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?(?:-dev)?\Z")
_KEYWORD = re.compile(r"\s*\S+")


def replace_image(raw: str, old: str, new: str, name: str | None = None) -> str:
    """FROM text with the image word `old` replaced by `new` (and ` AS name` added after it when given).

    A FROM whose image word is split over lines is written anew on one line (flags and name kept)."""
    keyword = _KEYWORD.match(raw)
    lower = bool(keyword and keyword.group(0).strip().islower())
    suffix = f" {'as' if lower else 'AS'} {name}" if name else ""
    m = _FROM.match(raw)
    if m and m.group(2) == old:
        return raw[:m.start(2)] + new + suffix + raw[m.end(2):]
    parsed = parse(raw, "Dockerfile").dockerfile
    if not parsed.stages:
        return raw
    instruction = parsed.stages[0].instructions[0]
    flags = "".join(f" --{f.name}" + (f"={f.value}" if f.value is not None else "") for f in instruction.flags)
    rest = instruction.args[1:] if instruction.args else []
    return f"{instruction.keyword_raw}{flags} {' '.join([new, *rest])}{suffix}\n"


def arg_only(image_word: str) -> str | None:
    """The ARG name when the FROM image is exactly `$NAME` or `${NAME}` (a -dev suffix allowed)."""
    m = _ARG_ONLY.match(image_word)
    return m.group(1) if m else None


def replace_arg_default(instruction: Instruction, name: str, value: str) -> str | None:
    """ARG text with NAME's default replaced (quotes kept); None when NAME has no default there."""
    raw = instruction.raw
    head = _KEYWORD.match(raw)
    offset = head.end() if head else 0
    for word in split_words(raw[offset:]):
        key, eq, old = word.text.partition("=")
        if key == name and eq:
            quote = old[:1] if old[:1] in "'\"" and old.endswith(old[:1]) and len(old) > 1 else ""
            start = offset + word.start + len(key) + 1
            return raw[:start] + f"{quote}{value}{quote}" + raw[start + len(old):]
    return None


def user_root_follows(stage: Stage) -> bool:
    """The instruction after FROM already is `USER root` (or uid 0)."""
    if len(stage.instructions) < 2 or stage.instructions[1].keyword != "USER":
        return False
    return stage.instructions[1].value.split(":", 1)[0] in ("root", "0")


def keyword(name: str, like: Instruction) -> str:
    """`name` in the case the Dockerfile writes its keywords (judged by `like`)."""
    return name.lower() if like.keyword_raw.islower() else name
