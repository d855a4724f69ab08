"""The Dockerfile lexer (and the instruction builder on top of it) held to BuildKit's own parser (issue 43),
through the `dockerfile` package (BuildKit's Go parser bound to Python): for random Dockerfiles (keywords in
any case, flags, JSON and shell forms, line continuations with trailing blanks, comment and blank lines inside
them, heredocs, the escape directive), the same instructions with the same keyword, first and last line,
joined text, flags, JSON form, arguments and heredoc bodies."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from repocontext.dockerfile.lexer import LogicalInstruction, lex
from repocontext.dockerfile.parser import build_instruction
from repocontext.model import Instruction

dockerfile = pytest.importorskip("dockerfile", reason="the `dockerfile` package (BuildKit's parser) is not installed")

WORD = st.text(alphabet="abcxyz019/._-:$=@", min_size=1, max_size=6)
QUOTED = st.builds(lambda q, w: q + w + " " + w + q, st.sampled_from(["'", '"']), WORD)
SHELL = st.lists(st.one_of(WORD, WORD, QUOTED, st.sampled_from(["&&", "|", ";", "<<'X'", "C:\\x", "C:\\\\", "x``"])),
                 min_size=1, max_size=5).map(" ".join)
JSON = st.lists(st.text(alphabet="ab -/\"\\", max_size=4), max_size=3).map(json.dumps)
FLAGS = {"RUN": ["--mount=type=cache,target=/x", "--network=none"], "COPY": ["--from=b", "--chown=1:1", "--link"],
         "ADD": ["--chown=1:1", "--link"], "FROM": ["--platform=linux/amd64"], "HEALTHCHECK": ["--interval=5s"]}
BODY = st.lists(st.sampled_from(["echo hi", "\tindented", "RUN not an instruction", "# not a comment", "", "EOFX"]),
                max_size=3)


@st.composite
def arguments(draw: st.DrawFn, keyword: str) -> tuple[str, list[tuple[str, bool, list[str]]]]:
    """(argument text, heredocs as (name, chomp, body lines)) for `keyword`."""
    flags = draw(st.lists(st.sampled_from(FLAGS.get(keyword, ["--x"])), max_size=2, unique=True)) \
        if keyword in FLAGS else []
    heredocs: list[tuple[str, bool, list[str]]] = []
    if keyword in ("RUN", "CMD", "ENTRYPOINT", "SHELL", "COPY", "ADD", "VOLUME") and draw(st.booleans()):
        rest = draw(JSON)
    elif keyword in ("RUN", "COPY", "ADD") and draw(st.integers(0, 2)) == 0:
        words = []
        for name in draw(st.lists(st.sampled_from(["EOF", "END", "B"]), min_size=1, max_size=2, unique=True)):
            chomp = draw(st.booleans())
            quote = draw(st.sampled_from(["", "'", '"']))
            words.append(f"<<{'-' if chomp else ''}{quote}{name}{quote}")
            heredocs.append((name, chomp, draw(BODY)))
        rest = " ".join([*words, draw(WORD)] if keyword != "RUN" else ["cat", *words])
    elif keyword in ("FROM", "COPY", "ADD", "EXPOSE", "VOLUME", "ARG"):
        rest = " ".join(draw(st.lists(WORD, min_size=1, max_size=3)))  # words: no quotes (BuildKit splits on blanks)
    elif keyword == "HEALTHCHECK":
        rest = draw(st.sampled_from(["NONE", "CMD " + draw(SHELL), "CMD " + draw(JSON)]))
    elif keyword == "ONBUILD":
        rest = draw(st.sampled_from(["RUN ", "COPY a ", "run "])) + draw(WORD)
    else:
        rest = draw(SHELL)
    return " ".join([*flags, rest]), heredocs


KEYWORDS = ("FROM", "RUN", "CMD", "ENTRYPOINT", "COPY", "ADD", "ENV", "LABEL", "WORKDIR", "USER", "EXPOSE", "ARG",
            "VOLUME", "SHELL", "STOPSIGNAL", "HEALTHCHECK", "ONBUILD", "MAINTAINER")


@st.composite
def instruction(draw: st.DrawFn, escape: str) -> list[str]:
    keyword = draw(st.sampled_from(KEYWORDS))
    written = draw(st.sampled_from([keyword, keyword.lower(), keyword.capitalize()]))
    args, heredocs = draw(arguments(keyword))
    text = draw(st.sampled_from(["", "", "  "])) + written + " " + args
    # break the logical line at some blanks: escape char, maybe trailing blanks, maybe comment or blank lines
    pieces = text.split(" ")
    lines, current = [], pieces[0]
    for piece in pieces[1:]:
        if draw(st.integers(0, 3)) == 0 and not heredocs:
            lines.append(current + " " + escape + draw(st.sampled_from(["", " ", " \t"])))
            lines.extend(draw(st.lists(st.sampled_from(["  # inside", "", "   "]), max_size=2)))
            current = draw(st.sampled_from(["", "  ", "\t"])) + piece
        else:
            current += " " + piece
    lines.append(current)
    for name, chomp, body in heredocs:
        lines.extend(("\t" + b if chomp else b) for b in body)
        lines.append(("\t" if chomp else "") + name)
    return lines


@st.composite
def dockerfiles(draw: st.DrawFn) -> str:
    directive = draw(st.sampled_from(["", "", "# escape=`", "# escape=\\", "#ESCAPE = `", "# syntax=docker/x"]))
    escape = "`" if "`" in directive else "\\"
    lines = [directive] if directive else []
    lines.append("FROM base")
    for _ in range(draw(st.integers(1, 5))):
        lines.extend(draw(st.lists(st.sampled_from(["", "# comment", "  # indented comment"]), max_size=2)))
        lines.extend(draw(instruction(escape)))
    return draw(st.sampled_from(["\n", "\r\n"])).join(lines) + "\n"


def ours(text: str) -> list[tuple[LogicalInstruction, Instruction]]:
    lexed = lex(text)
    nodes = [n for n in lexed.nodes if isinstance(n, LogicalInstruction)]
    return [(node, build_instruction(node, lexed.escape)[0].instruction) for node in nodes]


def arguments_of(node: LogicalInstruction, built: Instruction) -> tuple[str, ...]:
    """Our reading of the arguments in BuildKit's shape for the instruction."""
    keyword = built.keyword
    if keyword == "ONBUILD":
        return ()  # BuildKit gives the inner instruction's; compared through sub_cmd only
    if keyword == "HEALTHCHECK":  # ("CMD", argv...) for the exec form, ("CMD", text) for the shell form
        head, _, rest = built.value.partition(" ")
        command = built.args if built.form == "exec" else [rest.strip()] if rest.strip() else []
        return (head.upper(), *command)
    if built.form == "exec":
        return tuple(built.args)
    if keyword in ("RUN", "CMD", "ENTRYPOINT", "SHELL", "WORKDIR", "USER", "STOPSIGNAL", "MAINTAINER"):
        return (built.value,) if built.value else ()
    if keyword in ("FROM", "COPY", "ADD", "EXPOSE", "VOLUME", "ARG"):
        return tuple(built.args)
    return ()  # ENV, LABEL: BuildKit splits name=value pairs; not an argument list here


def flag_text(built: Instruction) -> tuple[str, ...]:
    return tuple(f"--{f.name}" + (f"={f.value}" if f.value is not None else "") for f in built.flags)


@settings(max_examples=300, deadline=None)
@given(text=dockerfiles())
@example(text="FROM a\nRUN a \\\\\nRUN b\n")  # an escaped escape char at the end does not continue the line
@example(text="FROM a\nRUN <<-EOF cat\n\tx\n\tEOF\nCMD y\n")
@example(text="# escape=`\nFROM a\nRUN dir `\n  C:\\ \\\nCMD y\n")
def test_instructions_match_buildkit(text: str) -> None:
    try:
        theirs = dockerfile.parse_string(text)
    except dockerfile.GoParseError:  # e.g. a JSON array with a non-string: Docker refuses the file
        assume(False)
    mine = ours(text)
    assert len(mine) == len(theirs), (text, [c.original for c in theirs], [n.text for n, _ in mine])
    for (node, built), command in zip(mine, theirs, strict=True):
        where = (text, command)
        assert built.keyword_raw == command.cmd, where
        assert (node.start, node.end) == (command.start_line, command.end_line), where
        assert node.text == command.original.split("\n")[0], where
        assert [(d.name, d.content) for d in built.heredocs] == [(h.name, h.content) for h in command.heredocs], where
        if built.keyword == "ONBUILD":
            assert built.value.split()[0] == command.sub_cmd, where
            continue
        assert flag_text(built) == command.flags, where
        if built.keyword in ("RUN", "CMD", "ENTRYPOINT", "SHELL", "COPY", "ADD", "VOLUME"):
            assert (built.form == "exec") == command.json, where
        if built.keyword not in ("ENV", "LABEL") and buildable(command):
            assert arguments_of(node, built) == command.value, where


def buildable(command: object) -> bool:
    """Docker splits FROM/COPY/ADD/EXPOSE/VOLUME/ARG words on blanks and then refuses a word with an open quote
    (`COPY "a b" c`); our words keep a quoted blank inside. Compared where Docker would build the file."""
    words = getattr(command, "value", ())
    return getattr(command, "json", False) or all(w.count('"') % 2 == 0 and w.count("'") % 2 == 0 for w in words)
