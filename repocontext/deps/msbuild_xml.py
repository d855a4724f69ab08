"""MSBuild and packages.config XML as flat elements with line numbers and attributes (xml.etree keeps neither
lines nor a cheap way to them).

Read with expat directly. A project file is repository content: a DOCTYPE's entity declarations are refused
(no entity is ever expanded, so no "billion laughs"), nothing is fetched (expat resolves no external entity
unless asked), and nesting is capped. A UTF-8 byte-order mark (Visual Studio writes one) is dropped first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.parsers import expat

MAX_DEPTH = 32  # a project file nests about 4 deep


class MsbuildXmlError(ValueError):
    """Text that is not well-formed XML, or that this reader refuses; `line` is where."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


@dataclass
class Element:
    tag: str  # local name, as written (MSBuild names are case-insensitive: compare with `is_`)
    attrs: dict[str, str]
    line: int  # the line of the start tag
    parent: str  # the parent's local name ("" for the root)
    text: str = ""
    children: list[Element] = field(default_factory=list)

    def is_(self, name: str) -> bool:
        return self.tag.lower() == name.lower()

    def attr(self, name: str) -> str | None:
        """An attribute by case-insensitive name (MSBuild accepts `version=` as `Version=`)."""
        wanted = name.lower()
        return next((v for k, v in self.attrs.items() if k.lower() == wanted), None)

    def child(self, name: str) -> Element | None:
        return next((c for c in self.children if c.is_(name)), None)


def parse(text: str) -> list[Element]:
    """Every element in document order (each knows its children); raises MsbuildXmlError."""
    parser = expat.ParserCreate()
    stack: list[Element] = []
    found: list[Element] = []
    texts: list[list[str]] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        if len(stack) >= MAX_DEPTH:
            raise MsbuildXmlError(f"elements nest deeper than {MAX_DEPTH}", parser.CurrentLineNumber)
        element = Element(tag.rpartition(":")[2], attrs, parser.CurrentLineNumber, stack[-1].tag if stack else "")
        if stack:
            stack[-1].children.append(element)
        stack.append(element)
        found.append(element)
        texts.append([])

    def end(_tag: str) -> None:
        stack.pop().text = "".join(texts.pop()).strip()

    def data(chunk: str) -> None:
        if texts:
            texts[-1].append(chunk)

    def refuse(*_args: object) -> None:
        raise MsbuildXmlError("entity declarations are not allowed", parser.CurrentLineNumber)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = data
    parser.EntityDeclHandler = refuse
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    try:
        parser.Parse(text.removeprefix("\ufeff"), True)
    except expat.ExpatError as exc:
        raise MsbuildXmlError(f"invalid XML: {expat.ErrorString(exc.code)}", exc.lineno) from None
    if not found:
        raise MsbuildXmlError("no root element", 1)
    return found
