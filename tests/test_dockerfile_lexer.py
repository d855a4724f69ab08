"""Logical lines, directives, continuations and heredocs, as Docker's parser reads them."""

from __future__ import annotations

from pathlib import Path

from repocontext.dockerfile.lexer import LogicalInstruction, heredoc_words, lex
from repocontext.lines import split_lines
from repocontext.model import Trivia


def lexed_file(tmp_path: Path, text: str):
    path = tmp_path / "Dockerfile"
    path.write_bytes(text.encode())
    result = lex(path.read_bytes().decode())
    assert "".join(n.raw for n in result.nodes) == text  # every line lands in exactly one node
    return result


def instructions(result) -> list[LogicalInstruction]:
    return [n for n in result.nodes if isinstance(n, LogicalInstruction)]


def test_physical_lines_split_on_newline_only() -> None:
    assert split_lines("a\r\nb\x0cc\nd") == ["a\r\n", "b\x0cc\n", "d"]
    assert split_lines("") == [] and split_lines("x\n") == ["x\n"]


def test_directives_only_at_the_top(tmp_path: Path) -> None:
    result = lexed_file(tmp_path, "# syntax=docker/dockerfile:1\n  #ESCAPE = `\n\n# check=skip=all\nFROM a\n")
    assert result.directives == {"syntax": "docker/dockerfile:1", "escape": "`"}
    assert result.escape == "`"
    assert [(n.line, n.kind) for n in result.nodes if isinstance(n, Trivia)] == [
        (1, "directive"), (2, "directive"), (3, "blank"), (4, "comment")]


def test_unknown_directive_ends_directive_parsing(tmp_path: Path) -> None:
    result = lexed_file(tmp_path, "# foo=bar\n# escape=`\nFROM a\n")
    assert result.directives == {} and result.escape == "\\"


def test_bad_and_duplicate_directives_are_problems(tmp_path: Path) -> None:
    result = lexed_file(tmp_path, "# escape=x\n# syntax=a\n# syntax=b\nFROM a\n")
    assert result.problems == [(1, "invalid escape token 'x': must be ` or \\"),
                               (3, "only one syntax parser directive can be used")]
    assert result.directives == {"syntax": "a"}


def test_continuations_skip_comment_and_blank_lines(tmp_path: Path) -> None:
    text = "RUN echo a \\  \n  # inside\n\n   \t\n    b \\\n  c\nCMD x\n"
    run, cmd = instructions(lexed_file(tmp_path, text))
    assert (run.start, run.end, run.text) == (1, 6, "RUN echo a     b   c")
    assert [run.line_at(o) for o in (0, 10, 11, 16, 18)] == [1, 1, 5, 5, 6]
    assert (cmd.start, cmd.text) == (7, "CMD x")


def test_backtick_escape_continues_and_backslash_does_not(tmp_path: Path) -> None:
    text = "# escape=`\nRUN dir `\n  C:\\ \\\nCMD y\n"
    run, cmd = instructions(lexed_file(tmp_path, text))
    assert (run.start, run.end, run.text) == (2, 3, "RUN dir   C:\\ \\")
    assert cmd.start == 4


def test_continuation_at_end_of_file(tmp_path: Path) -> None:
    (run,) = instructions(lexed_file(tmp_path, "RUN a \\\n"))
    assert (run.start, run.end, run.text) == (1, 1, "RUN a ")


def test_bom_is_kept_in_raw_but_not_in_text(tmp_path: Path) -> None:
    result = lexed_file(tmp_path, "\ufeffFROM a\n")
    (node,) = instructions(result)
    assert node.text == "FROM a" and node.raw == "\ufeffFROM a\n"


def test_heredocs_follow_the_instruction(tmp_path: Path) -> None:
    text = "RUN <<A cat >x \\\n && <<-'B' sh\nbody a\nA\n\tbody b\n\tB\nCOPY <<EOF /f\nEOF\nENV X <<NOT\n"
    run, copy, env = instructions(lexed_file(tmp_path, text))
    assert (run.start, run.end) == (1, 6)
    assert [(d.name, d.line, d.end_line, d.chomp, d.expand, d.content) for d in run.heredocs] == [
        ("A", 3, 4, False, True, "body a\n"), ("B", 5, 6, True, False, "\tbody b\n")]
    assert (copy.start, copy.end, copy.heredocs[0].content) == (7, 8, "")
    assert (env.start, env.end, env.heredocs) == (9, 9, [])


def test_heredoc_words_rules() -> None:
    assert heredoc_words('RUN ["cat", "<<EOF"]') == []  # JSON form carries no heredoc
    assert [d.name for d in heredoc_words("ONBUILD RUN <<EOF")] == ["EOF"]
    assert [d.name for d in heredoc_words("RUN --mount=type=cache,target=/x <<\"E O\" <<3")] == ["3"]
    assert [(d.name, d.expand) for d in heredoc_words('ADD <<"a"b /x')] == [("ab", False)]
    assert heredoc_words("RUN echo '<<EOF'") == []


def test_unterminated_heredoc_runs_to_end_of_file(tmp_path: Path) -> None:
    result = lexed_file(tmp_path, "FROM a\nRUN <<EOF\nline\n")
    run = instructions(result)[1]
    assert (run.end, run.heredocs[0].content, run.heredocs[0].end_line) == (3, "line\n", 3)
    assert result.problems == [(2, "unterminated heredoc 'EOF'")]


def test_heredoc_terminator_with_crlf(tmp_path: Path) -> None:
    text = "RUN <<EOF\r\necho\r\nEOF\r\nCMD x\r\n"
    run, cmd = instructions(lexed_file(tmp_path, text))
    assert (run.end, run.heredocs[0].content, cmd.start) == (3, "echo\r\n", 4)


def test_an_escaped_escape_char_does_not_continue(tmp_path: Path) -> None:
    # BuildKit's rule (held by test_dockerfile_lexer_oracle.py where the `dockerfile` package is installed)
    run, cmd = instructions(lexed_file(tmp_path, "RUN dir C:\\\\\nCMD y\n"))
    assert (run.start, run.end, run.text, cmd.start) == (1, 1, "RUN dir C:\\\\", 2)
    run, cmd = instructions(lexed_file(tmp_path, "# escape=`\nRUN a ``\nCMD b `\n c\n"))
    assert (run.text, cmd.text, cmd.end) == ("RUN a ``", "CMD b  c", 4)


def test_a_first_line_holding_only_the_escape_char(tmp_path: Path) -> None:
    from repocontext.dockerfile.parser import build_instruction

    (node,) = instructions(lexed_file(tmp_path, "  \\ \n\tCOPY a b\n"))
    assert (node.start, node.end, node.text) == (1, 2, "\tCOPY a b")
    assert build_instruction(node, "\\")[0].instruction.keyword == "COPY"
