"""Physical lines → parser directives, trivia and logical instructions, as Docker's parser reads them.

Every physical line ends up in exactly one node (a Trivia line or an instruction's
`raw`), so concatenating the nodes' raw text in order gives back the file.
Docker's rules followed here: directives only at the very top (`# name=value`,
stopping at the first other line); the escape char (`\\` or a backtick) followed
by optional blanks at end of line continues the instruction, unless an escape
char comes right before it (`RUN a \\\\` ends there); comment lines and
blank lines inside a continued instruction are skipped; heredocs (`<<EOF`,
`<<-EOF`, quoted delimiters, several per line) follow the instruction's last line
for RUN, COPY and ADD (also under ONBUILD) unless the arguments are a JSON array.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Literal

from repocontext.dockerfile.words import extract_flags, parse_exec, split_words, unquote
from repocontext.lines import split_lines
from repocontext.model import Heredoc, Trivia

BLANKS = " \t\v\f\r"
_DIRECTIVE = re.compile(r"#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.+?)\s*\Z")
KNOWN_DIRECTIVES = frozenset({"syntax", "escape", "check"})
_HEREDOC_WORD = re.compile(r"(\d*)<<(-?)([^<]*)\Z", re.DOTALL)
HEREDOC_KEYWORDS = frozenset({"RUN", "COPY", "ADD"})


@dataclass
class LogicalInstruction:
    start: int  # first physical line, 1-based
    end: int  # last physical line, inclusive
    raw: str
    text: str  # the logical line: first line left-stripped, continuations joined, comment lines dropped
    segments: list[tuple[int, int]] = field(default_factory=list)  # (offset in text, physical line)
    heredocs: list[Heredoc] = field(default_factory=list)

    def line_at(self, offset: int) -> int:
        """The physical line holding character `offset` of `text`."""
        offsets = [s[0] for s in self.segments]
        return self.segments[max(0, bisect.bisect_right(offsets, offset) - 1)][1]


@dataclass
class Lexed:
    nodes: list[Trivia | LogicalInstruction] = field(default_factory=list)
    directives: dict[str, str] = field(default_factory=dict)
    escape: str = "\\"
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, message)


def _body(line: str) -> str:
    return line.rstrip("\r\n")


def _continuation(escape: str) -> re.Pattern[str]:
    """The escape char ending a line (blanks may follow), not itself escaped: BuildKit's rule."""
    return re.compile(f"(?<!{re.escape(escape)}){re.escape(escape)}[ \t]*\\Z")


def _is_comment(body: str) -> bool:
    return body.lstrip(BLANKS).startswith("#")


class _Lexer:
    def __init__(self, text: str) -> None:
        self.lines = split_lines(text)
        self.out = Lexed()
        self.continuation = _continuation("\\")

    def run(self) -> Lexed:
        i = self._directives()
        while i < len(self.lines):
            i = self._node(i)
        return self.out

    def _directives(self) -> int:
        i = 0
        while i < len(self.lines):
            body = _body(self.lines[i]).lstrip("\ufeff" if i == 0 else "").lstrip(BLANKS)
            m = _DIRECTIVE.match(body)
            if not m or m.group(1).lower() not in KNOWN_DIRECTIVES:
                return i
            name, value = m.group(1).lower(), m.group(2)
            if name in self.out.directives:
                self.out.problems.append((i + 1, f"only one {name} parser directive can be used"))
            elif name == "escape" and value not in ("\\", "`"):
                self.out.problems.append((i + 1, f"invalid escape token {value!r}: must be ` or \\"))
            else:
                self.out.directives[name] = value
                if name == "escape":
                    self.out.escape = value
                    self.continuation = _continuation(value)
            self.out.nodes.append(Trivia(line=i + 1, kind="directive", raw=self.lines[i]))
            i += 1
        return i

    def _continued(self, body: str) -> tuple[str, bool]:
        m = self.continuation.search(body)
        return (body[: m.start()], True) if m else (body, False)

    def _node(self, i: int) -> int:
        body = _body(self.lines[i])
        if i == 0:
            body = body.lstrip("\ufeff")
        stripped = body.lstrip(BLANKS)
        if stripped.startswith("#") or not stripped.strip(BLANKS):
            kind: Literal["comment", "blank"] = "comment" if stripped.startswith("#") else "blank"
            self.out.nodes.append(Trivia(line=i + 1, kind=kind, raw=self.lines[i]))
            return i + 1
        start = i
        piece, more = self._continued(stripped)
        text, segments = piece, [(0, i + 1)]
        while more and i + 1 < len(self.lines):
            i += 1
            body = _body(self.lines[i])
            if _is_comment(body) or not body.strip(BLANKS):
                continue  # Docker skips comment and empty lines inside a continuation
            piece, more = self._continued(body)
            segments.append((len(text), i + 1))
            text += piece
        node = LogicalInstruction(start=start + 1, end=i + 1, raw="", text=text, segments=segments)
        i = self._heredocs(node, i + 1)
        node.raw = "".join(self.lines[start:i])
        node.end = i
        self.out.nodes.append(node)
        return i

    def _heredocs(self, node: LogicalInstruction, i: int) -> int:
        """Attach heredoc bodies following the instruction; returns the next unread line index."""
        for doc in heredoc_words(node.text):
            content: list[str] = []
            first = i
            terminated = False
            while i < len(self.lines):
                candidate = _body(self.lines[i])
                if doc.chomp:
                    candidate = candidate.lstrip("\t")
                i += 1
                if candidate == doc.name:
                    terminated = True
                    break
                content.append(self.lines[i - 1])
            if not terminated:
                self.out.problems.append((node.start, f"unterminated heredoc {doc.name!r}"))
            node.heredocs.append(doc.model_copy(update={
                "line": first + 1, "end_line": i, "content": "".join(content)}))
        return i


def heredoc_words(text: str) -> list[Heredoc]:
    """The heredocs an instruction's logical line opens, in order (bodies not filled in)."""
    words = split_words(text)
    if not words or "<<" not in text:
        return []
    keyword = words[0].text.upper()
    rest = text[words[0].start + len(words[0].text):]
    if keyword == "ONBUILD" and len(words) > 1:
        keyword = words[1].text.upper()
        rest = text[words[1].start + len(words[1].text):]
    if keyword not in HEREDOC_KEYWORDS:
        return []
    _, offset = extract_flags(rest)
    if parse_exec(rest[offset:].strip()) is not None:
        return []  # JSON form never carries heredocs
    docs: list[Heredoc] = []
    for word in split_words(rest):
        m = _HEREDOC_WORD.match(word.text)
        if not m or not m.group(3):
            continue
        delimiter = m.group(3)
        name = unquote(delimiter)
        if len(split_words(name)) != 1:
            continue
        quoted = any(q in delimiter for q in "'\"")
        docs.append(Heredoc(name=name, line=0, end_line=0, chomp=m.group(2) == "-", expand=not quoted))
    return docs


def lex(text: str) -> Lexed:
    return _Lexer(text).run()
