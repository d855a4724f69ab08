"""Edits written on redacted text (what a bundle, a prompt or a checkpoint holds) change the real file exactly."""

from __future__ import annotations

import pytest

from planner.patch.plan import Edit, EditError, apply_edits, unified_diff
from repocontext.secrets import redact

REQUIREMENTS = ("requests==2.30.0\n"
                "internal-lib @ git+https://deploy:FAKEgitT0ken0000@git.example/acme/lib.git@v1\n")
DOCKERFILE = "FROM python:3.11\nARG GITHUB_TOKEN=FAKEargT0ken00\nENV API_KEY=FAKEenvK3y000 MODE=1\nCMD [\"app\"]\n"


def _apply(text: str, *edits: Edit) -> str:
    return apply_edits(lambda _: text, list(edits))["f"][1]


def test_an_edit_on_a_redacted_line_changes_the_real_line_exactly() -> None:
    shown = redact(REQUIREMENTS).splitlines()[1]
    assert "FAKEgitT0ken0000" not in shown
    edit = Edit(file="f", old=shown, new=shown.replace("@v1", "@v2"), line=2)
    after = _apply(REQUIREMENTS, edit)
    assert after == REQUIREMENTS.replace("@v1", "@v2")
    diff = unified_diff({"f": (REQUIREMENTS, after)})
    assert "FAKEgitT0ken0000" in diff and "FAKEgitT0ken0000" not in redact(diff)  # exact; shown copies are not


def test_values_of_one_rule_go_back_in_order_and_a_repeated_one_may_be_copied() -> None:
    shown = redact(DOCKERFILE)
    moved = shown.replace("FROM python:3.11\n", "FROM cgr.dev/chainguard/python:3.11-dev AS build\n")
    moved += "FROM cgr.dev/chainguard/python:3.11\n" + shown.splitlines(keepends=True)[2]  # ENV again
    after = _apply(DOCKERFILE, Edit(file="f", old=shown, new=moved))
    assert "ARG GITHUB_TOKEN=FAKEargT0ken00\n" in after and after.count("ENV API_KEY=FAKEenvK3y000 MODE=1") == 2
    assert "REDACTED" not in after


def test_a_marker_that_replaced_nothing_cannot_be_written() -> None:
    with pytest.raises(EditError, match="redacted value"):
        _apply(DOCKERFILE, Edit(file="f", old="CMD [\"app\"]", new="ENV TOKEN=REDACTED-secret-assignment"))


def test_marked_text_that_is_not_in_the_file_is_an_edit_error() -> None:
    with pytest.raises(EditError, match="occurs 0 times"):
        _apply(DOCKERFILE, Edit(file="f", old="ARG OTHER=REDACTED-secret-assignment", new="ARG OTHER=x"))
    with pytest.raises(EditError, match="on that line"):
        _apply(DOCKERFILE, Edit(file="f", old="ARG GITHUB_TOKEN=REDACTED-secret-assignment", new="", line=3))
