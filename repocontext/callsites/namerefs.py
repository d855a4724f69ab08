"""Finding the uses of imported names in a tree-sitter tree, by their text first (shared by the Rust, Ruby,
PHP, Java/Kotlin and C# scanners).

As in the JavaScript scanner: the bound names are looked for as whole words in the
file's bytes and each hit is asked of the tree, which is much cheaper than a query
capturing every identifier of a file and decoding each one's text.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator

from repocontext.callsites import treesitter as ts


def pos(node: ts.Node) -> tuple[int, int]:
    """(1-based line, 0-based byte column): the positions every call-site record uses."""
    return node.start_point[0] + 1, node.start_point[1]


def words(names: Iterable[str], ignore_case: bool = False) -> re.Pattern[bytes]:
    """The names as whole words of ASCII identifier characters, longest first."""
    alternatives = b"|".join(re.escape(name.encode("utf-8")) for name in sorted(set(names), key=lambda n: (-len(n), n)))
    return re.compile(rb"(?<![A-Za-z0-9_$\\])(?:" + alternatives + rb")(?![A-Za-z0-9_])",
                      re.IGNORECASE if ignore_case else 0)


def word_nodes(root: ts.Node, data: bytes, names: Collection[str], types: Collection[str],
               ignore_case: bool = False) -> Iterator[ts.Node]:
    """The nodes of a type in `types` whose whole extent is one of `names`, in document order."""
    if not names:
        return
    for hit in words(names, ignore_case).finditer(data):
        start, end = hit.span()
        node = root.descendant_for_byte_range(start, end)
        if node is not None and node.type in types and node.start_byte == start and node.end_byte == end:
            yield node


def after_dot(data: bytes, start: int) -> bool:
    """Whether the token at `start` follows a `.` (a member of something else, never an imported name)."""
    index = start - 1
    while index >= 0 and data[index] in b" \t\r\n":
        index -= 1
    return index >= 0 and data[index] == ord(".")


def inside(node: ts.Node, types: Collection[str]) -> bool:
    """Whether an ancestor of `node` has a type in `types`."""
    parent = node.parent
    while parent is not None:
        if parent.type in types:
            return True
        parent = parent.parent
    return False


def dotted(node: ts.Node | None) -> str:
    """A dotted or `::` path as written, without the spaces or comments a line break may leave in it."""
    return re.sub(r"\s+|//[^\n]*|/\*.*?\*/", "", ts.text(node), flags=re.DOTALL)
