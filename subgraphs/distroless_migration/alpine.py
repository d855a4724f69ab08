"""`apk add` on a stage that moves from Alpine to Wolfi: each name through the same table as apt/rpm names.

Wolfi shares most of Alpine's names, not all: `g++` is `gcc`, `musl-dev` is `glibc-dev`, and the musl
compatibility shims (`gcompat`, `libc6-compat`) are not needed on a glibc system. Each package word is
mapped where it stands (data/wolfi-map.yaml `apk:`, else the name itself when the Wolfi index has it):
- mapped to other names: replaced; mapped to nothing: removed, with the table's reason in the note;
- a version pin (`=1.2-r0`, `~1.2`, `>1`) or a repository tag (`@edge`) is removed and stated in the note:
  Alpine versions and repositories are not Wolfi's, so apk would not resolve them;
- an unknown name or a `$VARIABLE` list stays as written and is a blocker (the caller reports it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from repocontext.dockerfile.packages import MANAGERS as GRAMMARS
from repocontext.dockerfile.shellwords import Token
from subgraphs.distroless_migration.packages import wolfi_names

_SPEC = re.compile(r"([^=<>~@]+)(@[^=<>~]+)?(?:([=<>~]+)(.*))?\Z")
NOT_NEEDED = {  # why an Alpine package has no counterpart on Wolfi (the table maps these to [])
    "gcompat": "a glibc compatibility layer for musl: Wolfi is glibc-based, so it is not needed",
    "libc6-compat": "a glibc compatibility layer for musl: Wolfi is glibc-based, so it is not needed",
    "fortify-headers": "musl's fortify headers: glibc has its own, so it is not needed",
    "libintl": "part of glibc on Wolfi, so it is not needed",
}
Edit = tuple[int, int, str]


@dataclass
class Mapped:
    name: str  # the Alpine name
    new: list[str]  # the Wolfi names written (empty: removed)
    note: str
    start: int  # offset of the word (for its line)


@dataclass
class ApkAdd:
    """The edits for one `apk add` command and what each package became."""

    edits: list[Edit]
    mapped: list[Mapped]
    unmapped: list[tuple[str, int, str]]  # (word as written, offset, kind: unmapped-package | dynamic-package-list)
    kept: int  # package words left in the command


def _split(word: str) -> tuple[str, str]:
    """(name, what is removed: tag and pin as written, or '')."""
    m = _SPEC.match(word)
    if not m:
        return word, ""
    return m.group(1), (m.group(2) or "") + ((m.group(3) or "") + (m.group(4) or ""))


def _note(name: str, new: list[str], removed: str) -> str:
    parts = []
    if removed:
        parts.append(f"{removed!r} removed: Alpine versions and repositories are not Wolfi's")
    if not new:
        parts.append(NOT_NEEDED.get(name, "not needed on Wolfi"))
    elif new != [name]:
        parts.append("Wolfi's name")
    return "; ".join(parts)


def rewrite_add(words: list[Token], before: Callable[[Token], int], overrides: dict[str, list[str]]) -> ApkAdd | None:
    """`words`: the command from `apk` on; None when it is not `apk add` (left alone)."""
    grammar = GRAMMARS["apk"]
    out = ApkAdd([], [], [], 0)
    sub: str | None = None
    skip, emitted = False, set[str]()
    for word in words[1:]:
        if skip:
            skip = False
        elif word.text.startswith("-"):
            skip = "=" not in word.text and word.text in grammar.takes_value | grammar.skip_value
        elif sub is None:
            sub = word.text
            if sub != "add":
                return None
        else:
            out.kept += _package(word, before, overrides, emitted, out)
    return out if sub == "add" else None


def _package(word: Token, before: Callable[[Token], int], overrides: dict[str, list[str]], emitted: set[str],
             out: ApkAdd) -> int:
    if "$" in word.raw or "`" in word.raw:
        out.unmapped.append((word.raw, word.start, "dynamic-package-list"))
        return 1
    if "/" in word.text or word.text.endswith(".apk"):
        return 1  # a local package file or URL: installed as it is
    name, removed = _split(word.text)
    names = wolfi_names(name, "apk", overrides)
    if names is None:
        out.unmapped.append((word.text, word.start, "unmapped-package"))
        return 1
    fresh = [n for n in names if n not in emitted]
    emitted.update(fresh)
    out.mapped.append(Mapped(name, names, _note(name, names, removed), word.start))
    if not fresh:
        out.edits.append((before(word), word.end, ""))
        return 0
    if fresh != [word.text]:
        out.edits.append((word.start, word.end, " ".join(fresh)))
    return 1
