"""Shell words and operators with offsets."""

from __future__ import annotations

from repocontext.dockerfile.shellwords import command_index, commands, is_assignment, tokenize


def test_tokens_keep_offsets_quotes_and_redirections() -> None:
    text = "apt-get install -y \"a b\" $(echo c) 2>&1 && echo 'x;y' | tee /log; true &"
    tokens = tokenize(text)
    assert [(t.kind, t.text) for t in tokens] == [
        ("word", "apt-get"), ("word", "install"), ("word", "-y"), ("word", "a b"), ("word", "$(echo c)"),
        ("word", "2>&1"), ("op", "&&"), ("word", "echo"), ("word", "x;y"), ("op", "|"), ("word", "tee"),
        ("word", "/log"), ("op", ";"), ("word", "true"), ("op", "&")]
    assert all(text[t.start:t.end] == t.raw for t in tokens)


def test_head_and_script_modes() -> None:
    head = "RUN a \\\n    # comment\n\n    b\n"
    assert [t.text for t in tokenize(head, "head")] == ["RUN", "a", "b"]
    script = "a\n# note\nb \\\n  c\n"
    assert [c.words[-1].text for c in commands(tokenize(script))] == ["a", "c"]
    assert [c.op.text if c.op else None for c in commands(tokenize(script))] == ["\n", "\n"]


def test_command_index_skips_prefixes() -> None:
    words = tokenize("DEBIAN_FRONTEND=noninteractive sudo -E apt-get install x")
    k = command_index(words)
    assert k is not None and words[k].text == "apt-get"
    assert command_index(tokenize("A=1 B=2")) is None
    assert is_assignment("A=1") and not is_assignment("--a=1")


def test_a_continuation_with_trailing_blanks_is_not_an_escaped_space() -> None:
    text = "RUN apt-get install -qy \\ \n    ca-certificates \\\t\n    bzip2"
    assert [t.text for t in tokenize(text, "head")] == ["RUN", "apt-get", "install", "-qy", "ca-certificates", "bzip2"]
