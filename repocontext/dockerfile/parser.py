"""Logical instructions → Instruction models, and the whole Dockerfile → stages.

Instruction `form`: "exec" for a valid JSON array of strings (RUN, CMD,
ENTRYPOINT, SHELL, HEALTHCHECK CMD, and the JSON form of COPY/ADD/VOLUME),
"shell" for RUN/CMD/ENTRYPOINT/HEALTHCHECK CMD text that is not one (Docker runs
invalid JSON through the shell too), "none" otherwise. `args` is the JSON list for
the exec form, otherwise the quote-aware words as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from repocontext.dockerfile.lexer import LogicalInstruction, lex
from repocontext.dockerfile.stages import StageBuilder
from repocontext.dockerfile.words import extract_flags, is_json_non_string_array, parse_exec, split_words
from repocontext.model import Dockerfile, Instruction, InstructionFlag, Trivia

KEYWORDS = frozenset({"FROM", "RUN", "CMD", "LABEL", "MAINTAINER", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT",
                      "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"})
COMMAND_KEYWORDS = frozenset({"RUN", "CMD", "ENTRYPOINT", "SHELL"})
JSON_LIST_KEYWORDS = frozenset({"COPY", "ADD", "VOLUME"})
_KEYWORD = re.compile(r"\S+")


@dataclass
class ParseResult:
    dockerfile: Dockerfile
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, message), sorted


@dataclass
class Parsed:
    """One instruction with what the stage builder needs besides the model."""

    instruction: Instruction
    node: LogicalInstruction
    value_offset: int  # where `instruction.value` starts in node.text

    def value_line(self, offset: int) -> int:
        return self.node.line_at(self.value_offset + offset)


def _form_and_args(keyword: str, value: str,
                   escape: str) -> tuple[Literal["shell", "exec", "none"], list[str], str | None]:
    """(form, args, problem) for an instruction's argument text."""
    words = [w.text for w in split_words(value, escape)]
    if keyword == "HEALTHCHECK" and words and words[0].upper() == "CMD":
        form, args, problem = _form_and_args("CMD", value[len(words[0]):].strip(), escape)
        return form, (args if form == "exec" else words), problem
    if keyword not in COMMAND_KEYWORDS | JSON_LIST_KEYWORDS:
        return "none", words, None
    argv = parse_exec(value)
    if argv is not None:
        return "exec", argv, None
    problem = "JSON array with non-string items (Docker rejects it)" if is_json_non_string_array(value) else None
    if keyword in COMMAND_KEYWORDS and value:
        return "shell", words, problem
    return "none", words, problem


def build_instruction(node: LogicalInstruction, escape: str) -> tuple[Parsed, list[tuple[int, str]]]:
    text = node.text
    m = _KEYWORD.search(text)  # text starts with blanks when the first line held only the escape char
    keyword_raw = m.group(0) if m else ""
    keyword = keyword_raw.upper()
    rest_start = m.end() if m else 0
    flags, offset = extract_flags(text[rest_start:])
    value_offset = rest_start + offset
    value = text[value_offset:].strip()
    problems: list[tuple[int, str]] = []
    if keyword not in KEYWORDS:
        problems.append((node.start, f"unknown instruction {keyword_raw!r}"))
    form, args, problem = _form_and_args(keyword, value, escape)
    if problem:
        problems.append((node.start, f"{keyword}: {problem}"))
    instruction = Instruction(
        line=node.start, end_line=node.end, keyword=keyword, keyword_raw=keyword_raw, raw=node.raw,
        flags=[InstructionFlag(name=n, value=v) for n, v in flags], form=form, value=value, args=args,
        heredocs=node.heredocs,
    )
    return Parsed(instruction, node, value_offset), problems


def parse(text: str, path: str) -> ParseResult:
    """Parse Dockerfile text; never raises for bad content, problems come back with their line."""
    lexed = lex(text)
    problems = list(lexed.problems)
    trivia: list[Trivia] = []
    parsed: list[Parsed] = []
    for node in lexed.nodes:
        if isinstance(node, Trivia):
            trivia.append(node)
            continue
        item, found = build_instruction(node, lexed.escape)
        parsed.append(item)
        problems.extend(found)
    builder = StageBuilder(lexed.escape)
    for item in parsed:
        builder.add(item.instruction, item.value_line)
    problems.extend(builder.problems)
    if not builder.stages:
        problems.append((1, "no FROM instruction"))
    dockerfile = Dockerfile(
        path=path, stages=builder.stages, directives=lexed.directives, escape=lexed.escape,
        global_args=builder.global_args, preamble=builder.preamble, trivia=trivia,
        final_stage=len(builder.stages) - 1 if builder.stages else None,
    )
    return ParseResult(dockerfile, sorted(set(problems)))


def render(dockerfile: Dockerfile) -> str:
    """The original text, rebuilt from the parse (trivia and instructions in line order)."""
    pieces: list[tuple[int, str]] = [(t.line, t.raw) for t in dockerfile.trivia]
    pieces += [(i.line, i.raw) for i in dockerfile.preamble]
    pieces += [(i.line, i.raw) for stage in dockerfile.stages for i in stage.instructions]
    return "".join(raw for _, raw in sorted(pieces, key=lambda p: p[0]))
