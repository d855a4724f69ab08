"""The new Dockerfile text: the original pieces (trivia and instructions, in line order) with some
replaced, some dropped, text inserted before or after a piece, and text appended at the end."""

from __future__ import annotations

from repocontext.model import Dockerfile


class Editor:
    def __init__(self, dockerfile: Dockerfile) -> None:
        pieces = [(t.line, t.raw) for t in dockerfile.trivia]
        pieces += [(i.line, i.raw) for i in dockerfile.preamble]
        pieces += [(i.line, i.raw) for s in dockerfile.stages for i in s.instructions]
        self.pieces = dict(sorted(pieces))
        self.before: dict[int, list[str]] = {}
        self.after: dict[int, list[str]] = {}
        self.tail: list[str] = []

    def raw(self, line: int) -> str:
        return self.pieces[line]

    def replace(self, line: int, raw: str) -> None:
        self.pieces[line] = raw

    def insert_before(self, line: int, text: str) -> None:
        self.before.setdefault(line, []).append(text)

    def insert_after(self, line: int, text: str) -> None:
        self.after.setdefault(line, []).append(text)

    def append(self, text: str) -> None:
        self.tail.append(text)

    def origin(self, new_line: int) -> int:
        """The original line a line of the rendered text comes from (text inserted around an instruction
        counts as that instruction's; the appended tail as the last line), so a check of the written file
        is reported where the user's file has it."""
        at, last = 1, 1
        for line, raw in self.pieces.items():
            extra = self.after.get(line, [])
            piece = raw + "\n" if extra and raw and not raw.endswith("\n") else raw
            size = sum(t.count("\n") for t in self.before.get(line, [])) + piece.count("\n") + \
                sum(t.count("\n") for t in extra)
            if raw and piece.count("\n") == 0 and not extra:
                size += 1  # a last piece without its newline still holds a line
            if at <= new_line < at + max(size, 1 if raw else 0):
                inside = new_line - at - sum(t.count("\n") for t in self.before.get(line, []))
                return line + max(0, min(inside, raw.count("\n") - 1 if raw.count("\n") else 0))
            at += size
            last = line
        return last

    def render(self) -> str:
        out: list[str] = []
        for line, raw in self.pieces.items():
            out += self.before.get(line, [])
            extra = self.after.get(line, [])
            out.append(raw + "\n" if extra and raw and not raw.endswith("\n") else raw)
            out += extra
        text = "".join(out)
        if self.tail:
            text += ("" if not text or text.endswith("\n") else "\n") + "".join(self.tail)
        return text
