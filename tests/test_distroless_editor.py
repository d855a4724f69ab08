"""Text assembly and FROM/ARG word edits."""

from __future__ import annotations

from repocontext.dockerfile import parse
from subgraphs.distroless_migration.migrate import Editor
from subgraphs.distroless_migration.stages import arg_only, replace_arg_default, replace_image, user_root_follows


def test_editor_round_trips_and_edits() -> None:
    text = "# c\nFROM a\n\nRUN x\nCMD y"
    dockerfile = parse(text, "Dockerfile").dockerfile
    assert Editor(dockerfile).render() == text
    editor = Editor(dockerfile)
    editor.replace(4, "")
    editor.insert_before(2, "ARG Z=1\n")
    editor.insert_after(5, "USER root\n")
    editor.append("FROM b\n")
    assert editor.render() == "# c\nARG Z=1\nFROM a\n\nCMD y\nUSER root\nFROM b\n"


def test_fromline_helpers() -> None:
    assert replace_image("FROM --platform=$P python:3 AS b\n", "python:3", "new") == "FROM --platform=$P new AS b\n"
    assert replace_image("from x\n", "x", "y", name="build") == "from y as build\n"
    assert arg_only("${BASE}") == "BASE" and arg_only("$BASE") == "BASE" and arg_only("py:${V}") is None
    dockerfile = parse('ARG A=1 BASE="python:3.11" C\nFROM ${BASE}\nUSER 0:0\n', "Dockerfile").dockerfile
    arg = dockerfile.preamble[0]
    assert replace_arg_default(arg, "BASE", "cgr.dev/chainguard/python:3.11") == \
        'ARG A=1 BASE="cgr.dev/chainguard/python:3.11" C\n'
    assert replace_arg_default(arg, "C", "x") is None
    assert user_root_follows(dockerfile.stages[0])


def test_origin_maps_written_lines_back_to_the_users_lines() -> None:
    from repocontext.dockerfile import parse
    from subgraphs.distroless_migration.migrate import Editor

    editor = Editor(parse("FROM x\n# note\nRUN a \\\n  b\nCMD c", "Dockerfile").dockerfile)
    editor.insert_after(1, "USER root\n")
    editor.insert_before(5, "ENTRYPOINT []\n")
    assert editor.render() == "FROM x\nUSER root\n# note\nRUN a \\\n  b\nENTRYPOINT []\nCMD c"
    assert [editor.origin(n) for n in range(1, 8)] == [1, 1, 2, 3, 4, 5, 5]
