"""Version specifiers in the shapes manifests nearly always write, read without `packaging`.

Importing `packaging.specifiers` and compiling its grammar is ~4 ms of every bare start that reads a
requirement. This reader takes a narrow subset of PEP 440 (lower-case, canonical-looking versions) that
packaging accepts too, and answers None for anything else: the caller then asks packaging, which decides
validity and words the error. `tests/test_deps_specifiers.py` holds every answer to packaging's.
"""

from __future__ import annotations

import re
from functools import cache

_RELEASE = r"[0-9]+(?:\.[0-9]+)*"
_SUFFIX = r"(?:(?:a|b|rc)[0-9]+)?(?:\.post[0-9]+)?(?:\.dev[0-9]+)?"
_LOCAL = r"(?:\+[a-z0-9]+(?:[._-][a-z0-9]+)*)?"
_EQUALITY = rf"{_RELEASE}(?:\.\*|{_SUFFIX}{_LOCAL})"  # == and != alone take a wildcard or a local version
_ORDERING = rf"{_RELEASE}{_SUFFIX}"
# Sources, each compiled on first use (`_shape`): a file of `==` pins never compiles the rest.
_SHAPES: dict[str, str] = {
    "===": r"[^\s;)]+",  # arbitrary equality: any text without blanks, `;` or `)`
    "==": _EQUALITY,
    "!=": _EQUALITY,
    "~=": rf"[0-9]+(?:\.[0-9]+)+{_SUFFIX}",  # a compatible release names two segments at least
    "<=": _ORDERING,
    ">=": _ORDERING,
    "<": _ORDERING,
    ">": _ORDERING,
}


@cache
def _shape(operator: str) -> re.Pattern[str] | None:
    source = _SHAPES.get(operator)
    return re.compile(source) if source is not None else None


def _operator(spec: str) -> str:
    """The operator a specifier starts with, read as packaging reads it (longest first)."""
    if spec.startswith("==="):
        return "==="
    if spec[:2] in _SHAPES:
        return spec[:2]
    return spec[:1]


def plain_specifiers(text: str) -> list[tuple[str, str]] | None:
    """(operator, version as written) of each comma-joined specifier in `text`, in order; None when any is
    outside the plain shapes (packaging decides those). Empty parts are skipped, as packaging skips them."""
    pairs: list[tuple[str, str]] = []
    for part in text.split(","):
        spec = part.strip()
        if not spec:
            continue
        operator = _operator(spec)
        shape = _shape(operator)
        version = spec[len(operator):].strip()
        if shape is None or shape.fullmatch(version) is None:
            return None
        pairs.append((operator, version))
    return pairs


def exact_version(pairs: list[tuple[str, str]]) -> str | None:
    """The pinned version of a lone `==x` / `===x` (no wildcard), else None."""
    if len(pairs) == 1 and pairs[0][0] in ("==", "===") and not pairs[0][1].endswith("*"):
        return pairs[0][1]
    return None


def settled(pairs: list[tuple[str, str]]) -> bool:
    """Whether these pairs answer as packaging would without asking it: with several specifiers, packaging
    24 keeps them in a set (deduplicated by canonical version, unordered), which matters only to a pin."""
    return len(pairs) <= 1 or all(op not in ("==", "===") for op, _ in pairs)
