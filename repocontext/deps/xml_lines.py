"""A small XML tree with line numbers, for Maven poms (xml.etree keeps none).

Built with expat directly: element names as written (a pom's default namespace adds no prefix), the text of
each element stripped, and the line of its start tag and of its text. Documents are repository content:
a DOCTYPE with entity declarations is refused (no entity is ever expanded, so no "billion laughs"), and
nothing is fetched (expat never resolves external entities unless asked).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.parsers import expat

MAX_DEPTH = 64  # a pom nests about 8 deep; a deeper document is not a pom


class XmlError(ValueError):
    """A document that is not well-formed, or one this reader refuses; `line` is where."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


@dataclass
class Node:
    tag: str
    line: int
    text: str = ""
    text_line: int = 0  # the line the text starts on (its first non-blank character)
    children: list[Node] = field(default_factory=list)

    def child(self, tag: str) -> Node | None:
        return next((c for c in self.children if c.tag == tag), None)

    def all(self, tag: str) -> list[Node]:
        return [c for c in self.children if c.tag == tag]

    def find(self, *tags: str) -> Node | None:
        """The first node down the path of tags, or None."""
        node: Node | None = self
        for tag in tags:
            node = node.child(tag) if node is not None else None
        return node

    def value(self, tag: str) -> str | None:
        found = self.child(tag)
        return found.text if found is not None and found.text else None


def parse_xml(text: str) -> Node:
    """The root element; raises XmlError."""
    parser = expat.ParserCreate()
    stack: list[Node] = []
    roots: list[Node] = []
    chunks: list[list[str]] = []
    firsts: list[int] = []  # the line each open element's first text chunk starts on

    def start(tag: str, _attrs: dict[str, str]) -> None:
        if len(stack) >= MAX_DEPTH:
            raise XmlError(f"elements nest deeper than {MAX_DEPTH}", parser.CurrentLineNumber)
        node = Node(tag.rpartition(":")[2], parser.CurrentLineNumber)
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
        chunks.append([])
        firsts.append(node.line)

    def end(_tag: str) -> None:
        node = stack.pop()
        raw, first = "".join(chunks.pop()), firsts.pop()
        node.text = raw.strip()
        node.text_line = first + raw[:len(raw) - len(raw.lstrip())].count("\n") if node.text else node.line

    def data(chunk: str) -> None:
        if stack:
            if not chunks[-1]:
                firsts[-1] = parser.CurrentLineNumber
            chunks[-1].append(chunk)

    def refuse(*_args: object) -> None:
        raise XmlError("entity declarations are not allowed in a pom", parser.CurrentLineNumber)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = data
    parser.EntityDeclHandler = refuse
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        raise XmlError(f"invalid XML: {expat.ErrorString(exc.code)}", exc.lineno) from None
    if not roots:
        raise XmlError("no root element", 1)
    return roots[0]
