"""Maven's version order, as maven-artifact's ComparableVersion (Maven 3.8) defines it.

univers' MavenVersion parts from it on real versions: it puts `3.2.1.SP1` and `1.0.RC1` on the wrong side of
`3.2.1-SNAPSHOT` and `1.0-SNAPSHOT` (tests/test_maven_versions_oracle.py asks Maven's own jar). So the
"maven" scheme orders with this module.

The order, briefly: a version is split into items at `.`, at `-` (which opens a sub-list) and where digits
and letters meet (which opens one too). Numbers compare as numbers; qualifiers rank
alpha < beta < milestone < rc (= cr) < snapshot < "" (= ga = final = release) < sp < any other word (by
text); a single `a`, `b` or `m` right before a digit means alpha, beta, milestone. Trailing zeros and
release qualifiers of each list are dropped (1.0 == 1 == 1-ga). A number beats a qualifier or a sub-list; a
sub-list beats a qualifier.
"""

from __future__ import annotations

from functools import total_ordering
from typing import Union

_QUALIFIERS = ("alpha", "beta", "milestone", "rc", "snapshot", "", "sp")
_ALIASES = {"ga": "", "final": "", "release": "", "cr": "rc"}
_RELEASE = str(_QUALIFIERS.index(""))
_SHORT = {"a": "alpha", "b": "beta", "m": "milestone"}

Item = Union[int, str, "list[Item]"]  # a number, a qualifier (already aliased), a sub-list


def _rank(qualifier: str) -> str:
    """Java's comparableQualifier: the index of a known qualifier, else "7-word" (compared as text)."""
    return str(_QUALIFIERS.index(qualifier)) if qualifier in _QUALIFIERS else f"{len(_QUALIFIERS)}-{qualifier}"


def _word(text: str, before_digit: bool) -> str:
    if before_digit and len(text) == 1:
        text = _SHORT.get(text, text)
    return _ALIASES.get(text, text)


def _is_null(item: Item) -> bool:
    if isinstance(item, int):
        return item == 0
    if isinstance(item, str):
        return _rank(item) == _RELEASE
    return not item


def _normalize(items: list[Item]) -> None:
    """Drop trailing null items (0, release qualifiers, empty lists), stopping at a sub-list."""
    for index in range(len(items) - 1, -1, -1):
        if _is_null(items[index]):
            del items[index]
        elif not isinstance(items[index], list):
            break


def parse(version: str) -> list[Item]:
    text = version.lower()
    root: list[Item] = []
    current, stack = root, [root]
    digit, start = False, 0

    def item(end: int) -> Item:
        piece = text[start:end]
        return int(piece) if digit else _word(piece, False)

    def open_list() -> None:
        nonlocal current
        sub: list[Item] = []
        current.append(sub)
        current = sub
        stack.append(sub)

    for at, char in enumerate(text):
        if char in ".-":
            current.append(0 if at == start else item(at))
            start = at + 1
            if char == "-":
                open_list()
        elif char.isdigit() and char.isascii():
            if not digit and at > start:  # `x1`: the word opens a list of its own (after any items)
                if current:
                    open_list()
                current.append(_word(text[start:at], True))
                start = at
                open_list()
            digit = True
        else:
            if digit and at > start:
                current.append(int(text[start:at]))
                start = at
                open_list()
            digit = False
    if len(text) > start:
        if not digit and current:  # a trailing `.x` reads as `-x`
            open_list()
        current.append(item(len(text)))
    for items in reversed(stack):
        _normalize(items)
    return root


def _compare(left: Item | None, right: Item | None) -> int:
    """ComparableVersion's Item.compareTo, `left` never None unless both are."""
    if left is None:
        return 0 if right is None else -_compare(right, None)
    if isinstance(left, int):
        if right is None:
            return 0 if left == 0 else 1
        return (left > right) - (left < right) if isinstance(right, int) else 1
    if isinstance(left, str):
        if right is None:
            return (_rank(left) > _RELEASE) - (_rank(left) < _RELEASE)
        if isinstance(right, str):
            mine, theirs = _rank(left), _rank(right)
            return (mine > theirs) - (mine < theirs)
        return -1
    if right is None:  # every item against nothing, not just the first (Maven 3.8: MNG-6964)
        return next((found for one in left if (found := _compare(one, None))), 0)
    if isinstance(right, int):
        return -1
    if isinstance(right, str):
        return 1
    for index in range(max(len(left), len(right))):
        a = left[index] if index < len(left) else None
        b = right[index] if index < len(right) else None
        found = _compare(a, b) if a is not None else (0 if b is None else -_compare(b, a))
        if found:
            return found
    return 0


@total_ordering
class MavenVersion:
    """A sort key: compares as Maven compares the versions."""

    __slots__ = ("items", "text")

    def __init__(self, text: str) -> None:
        if not text.strip():
            raise ValueError("an empty Maven version")
        self.text, self.items = text, parse(text.strip())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MavenVersion) and _compare(self.items, other.items) == 0

    def __lt__(self, other: MavenVersion) -> bool:
        return _compare(self.items, other.items) < 0

    def __hash__(self) -> int:
        return hash(repr(self.items))

    def __repr__(self) -> str:
        return f"MavenVersion({self.text!r})"
