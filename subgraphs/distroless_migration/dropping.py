"""Removing commands from a RUN without breaking the shell program around them (issue 29 §2).

The rewriter drops commands apk needs no counterpart of (`apt-get update`, `rm -rf /var/lib/apt/lists/*`).
Each run of consecutive dropped commands is removed together with one operator, chosen so that the
program keeps its structure and meaning:
- the first command of a list (nothing before it, or `(`): with the operator after it
  (`apt-get update && if …` → `if …`);
- otherwise, when what follows is `;`/newline or the end of the list (`fi`, `done`, `)`, `;;`, the end):
  with the operator before it (`a && apt-get clean; fi` → `a; fi`), so `a` and what follows stay joined
  as they were;
- in the middle of an `&&` chain: with the operator after it (`a && apt-get update && b` → `a && b`);
- after `then`/`do`/`else`…: with the operator after it when a command follows (`then apt-get update &&
  b` → `then b`);
- anywhere else (a `case` arm, a keyword with nothing else after it, between `||`): replaced by `:`, the
  shell's no-op, which is always valid where a command is (`then apt-get update; fi` → `then :; fi`).
Shell keywords before a dropped command (`then`, `do`, `else`, `if`, `{`, `!`) are never removed.

Why not a full shell parser: bashlex 0.18, the candidate on PyPI, was tried on the 218 RUN scripts of
the three corpus trees plus the constructs of issue 29; it raises on `case` patterns, `$(( … ))` and
`[[ … ]]` (all common in RUN lines), while the edits here only need command boundaries, which
repocontext's tokenizer gives with offsets. The judge of the result is `sh -n` (verify.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from repocontext.dockerfile.shellwords import Command

KEYWORDS = frozenset({"then", "do", "else", "elif", "if", "while", "until", "!", "{", "time"})
CLOSERS = frozenset({"fi", "done", "esac", "then", "do", "else", "elif", "}"})
_LIST_OPS = frozenset({"&&", ";", "\n"})
Edit = tuple[int, int, str]


def _keywords(command: Command) -> int:
    """How many leading words of the command are shell keywords (kept when it is dropped)."""
    k, words = 0, command.words
    while k < len(words) and words[k].text in KEYWORDS and words[k].raw == words[k].text:  # a quoted "if" is a word
        k += 1
    return k


def _runs(dropped: set[int], cmds: list[Command]) -> list[tuple[int, int]]:
    """Runs (first, last) of consecutive dropped commands; a command led by a keyword starts a new run."""
    runs: list[tuple[int, int]] = []
    for i in sorted(dropped):
        if runs and runs[-1][1] == i - 1 and not _keywords(cmds[i]):
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


def _ends_list(cmds: list[Command], j: int) -> bool:
    """Nothing of the same list follows command j: the end, a closing keyword, `)` or `;;` after it."""
    op = cmds[j].op.text if cmds[j].op else None
    if op is None or op in (")", ";;") or j + 1 >= len(cmds):
        return True
    return cmds[j + 1].words[0].text in CLOSERS


def edits(cmds: list[Command], dropped: set[int], parens: Sequence[int] = ()) -> list[Edit]:
    """Text edits (start, end, replacement) that remove the dropped commands; `parens`: offsets of the `(`
    operators, which open a subshell without ending a command (`a && (apt-get clean)`)."""
    out: list[Edit] = []
    for i, j in _runs(dropped, cmds):
        lead = _keywords(cmds[i])
        before = cmds[i - 1].op.text if i > 0 and cmds[i - 1].op else None
        if i > 0 and any(cmds[i - 1].end <= p < cmds[i].start for p in parens):
            before = "("  # the command opens a subshell: what precedes it is outside
        after = cmds[j].op.text if cmds[j].op else None
        # up to the next command, or to a `(` before it, which stays: `X && (b)` → `(b)`
        upto = min([p for p in parens if cmds[j].end <= p] + [cmds[j + 1].start]) if j + 1 < len(cmds) else 0
        if lead:
            start = cmds[i].words[lead].start if lead < len(cmds[i].words) else cmds[i].end
            joined = after in _LIST_OPS and not _ends_list(cmds, j)  # `then X && b` → `then b`
            out.append((start, upto, "") if joined else (start, cmds[j].end, ":"))
        elif before in (None, "(") and not _ends_list(cmds, j) and after in _LIST_OPS | {"||"}:
            out.append((cmds[i].start, upto, ""))
        elif before in _LIST_OPS | {"||"} and (after in (";", "\n") or _ends_list(cmds, j)):
            out.append((cmds[i - 1].end, cmds[j].end, ""))
        elif before == "&&" and after == "&&" and not _ends_list(cmds, j):
            out.append((cmds[i].start, upto, ""))
        elif before is None and _ends_list(cmds, j) and after in (None, ";", "\n"):
            out.append((cmds[i].start, cmds[j].end, ""))  # the whole list goes (the RUN may then be dropped)
        else:
            out.append((cmds[i].start, cmds[j].end, ":"))
    return out
