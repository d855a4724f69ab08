"""Every TCCM validation error is one line naming the file, the line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.errors import TCCMError
from planner.tccm.registry import Registry

VALID = """\
task_class: demo
version: 1
description: A demo task class.
must_read:
  - key: dependencies
    reason: what is declared
should_read:
  - glob: "**/*.py"
may_read:
  - key: conventions
bootstrap_globs: ["**/requirements*.txt"]
budget:
  max_files: 10
  max_tokens: 1000
  per_file_max_tokens: 500
"""


def _errors(tmp_path: Path, text: str, name: str = "demo") -> list[TCCMError]:
    directory = tmp_path / "tc"
    directory.mkdir(exist_ok=True)
    (directory / f"{name}.yaml").write_text(text, encoding="utf-8")
    return Registry([directory]).validate()


def _one(tmp_path: Path, text: str, name: str = "demo") -> str:
    errors = _errors(tmp_path, text, name)
    assert len(errors) >= 1, "expected a validation error"
    message = str(errors[0])
    assert "\n" not in message
    assert f"{name}.yaml" in message
    return message


def test_valid_file_has_no_errors(tmp_path: Path) -> None:
    assert _errors(tmp_path, VALID) == []
    tccm = Registry([tmp_path / "tc"]).get("demo")
    assert [e.selector for e in tccm.must_read] == ["key:dependencies"]
    assert tccm.budget.max_tokens == 1000 and tccm.version == "1"


def test_unknown_top_level_field_names_line(tmp_path: Path) -> None:
    message = _one(tmp_path, VALID + "colour: blue\n")
    assert message.endswith(":16: colour: unknown field")


def test_unknown_field_in_entry(tmp_path: Path) -> None:
    message = _one(tmp_path, VALID.replace("    reason: what is declared", "    reasn: typo"))
    assert ":6: must_read[0].reasn: unknown field" in message


def test_wrong_type(tmp_path: Path) -> None:
    message = _one(tmp_path, VALID.replace("max_files: 10", "max_files: ten"))
    assert ":13: budget.max_files:" in message and "integer" in message


@pytest.mark.parametrize("field", ["max_files", "max_tokens", "per_file_max_tokens"])
def test_negative_budget(tmp_path: Path, field: str) -> None:
    text = VALID.replace(f"{field}: ", f"{field}: -").replace(f"{field}: -", f"{field}: -", 1)
    message = _one(tmp_path, text)
    assert f"budget.{field}" in message and "greater than 0" in message


def test_inconsistent_budget(tmp_path: Path) -> None:
    message = _one(tmp_path, VALID.replace("per_file_max_tokens: 500", "per_file_max_tokens: 5000"))
    assert ":12: budget: per_file_max_tokens (5000) exceeds max_tokens (1000)" in message


def test_entry_with_both_key_and_glob(tmp_path: Path) -> None:
    message = _one(tmp_path, VALID.replace("  - glob: \"**/*.py\"", "  - glob: \"**/*.py\"\n    key: languages"))
    assert ":8: should_read[0]: an entry needs exactly one of 'key', 'files_of' or 'glob'" in message


def test_entry_with_neither(tmp_path: Path) -> None:
    message = _one(tmp_path, VALID.replace("  - key: conventions", "  - reason: nothing"))
    assert ":10: may_read[0]: an entry needs exactly one of 'key', 'files_of' or 'glob'" in message


@pytest.mark.parametrize("glob", ["../secrets/*", "//etc/passwd", "/../x", "a/../../b", "~/x", "C:/x"])
def test_globs_that_escape_the_repo(tmp_path: Path, glob: str) -> None:
    message = _one(tmp_path, VALID.replace('"**/*.py"', f'"{glob}"'))
    assert ":8: should_read[0].glob:" in message
    assert "escapes" in message or "absolute" in message


def test_a_leading_slash_anchors_a_glob_at_the_root(tmp_path: Path) -> None:
    # `/README.md` is the root README (as in .gitignore), not an absolute path
    assert _errors(tmp_path, VALID.replace('"**/*.py"', '"/README.md"')) == []
    tccm = Registry([tmp_path / "tc"]).get("demo")
    assert [e.glob for e in tccm.should_read] == ["/README.md"]


def test_bootstrap_glob_escaping(tmp_path: Path) -> None:
    message = _one(tmp_path, VALID.replace('["**/requirements*.txt"]', '["../x"]'))
    assert "bootstrap_globs" in message and "escapes" in message


def test_unknown_repocontext_key(tmp_path: Path) -> None:
    message = _one(tmp_path, VALID.replace("key: conventions", "key: runtime_traces.pods"))
    assert ":10: may_read[0].key: unknown RepoContext key 'runtime_traces'" in message


def test_bad_input_substitution(tmp_path: Path) -> None:
    message = _one(tmp_path, VALID.replace("key: conventions", "key: call_sites.${env.HOME}"))
    assert "may_read[0].key" in message and "${inputs.NAME}" in message


def test_duplicate_key(tmp_path: Path) -> None:
    message = _one(tmp_path, VALID + "version: 2\n")
    assert message.endswith(":16: version: duplicate key (first defined on line 2)")


def test_duplicate_key_nested(tmp_path: Path) -> None:
    message = _one(tmp_path, VALID.replace("  max_files: 10", "  max_files: 10\n  max_files: 11"))
    assert ":14: budget.max_files: duplicate key (first defined on line 13)" in message


def test_non_mapping_document(tmp_path: Path) -> None:
    assert _one(tmp_path, "- just\n- a list\n").endswith(":1: the document must be a mapping of TCCM fields")


def test_empty_file(tmp_path: Path) -> None:
    assert _one(tmp_path, "   \n# only a comment\n").endswith("demo.yaml: file is empty")


def test_malformed_yaml(tmp_path: Path) -> None:
    message = _one(tmp_path, "task_class: demo\nversion: [1\n")
    assert "invalid YAML" in message and "demo.yaml:" in message


def test_task_class_must_match_file_name(tmp_path: Path) -> None:
    message = _one(tmp_path, VALID, name="other")
    assert ":1: task_class: 'demo' does not match the file name 'other.yaml'" in message


def test_missing_required_field(tmp_path: Path) -> None:
    message = _one(tmp_path, VALID.replace("version: 1\n", ""))
    assert "version: required field is missing" in message


def test_missing_budget_without_parent(tmp_path: Path) -> None:
    text = VALID.split("budget:")[0]
    message = _one(tmp_path, text)
    assert "budget" in message and "missing" in message


def test_bad_slug(tmp_path: Path) -> None:
    message = _one(tmp_path, VALID.replace("task_class: demo", "task_class: Demo_Class"), name="Demo_Class")
    assert "task_class" in message


def test_alias_bomb_is_refused_fast(tmp_path: Path) -> None:
    bomb = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 12):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        bomb.append(f"{cur}: &{cur} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]")
    message = _one(tmp_path, "\n".join(bomb) + "\n")  # how fast: bench/failfast.py
    assert ":1: YAML anchors and aliases are not allowed" in message


def test_huge_file_is_refused(tmp_path: Path) -> None:
    message = _one(tmp_path, VALID + "# " + "x" * 600_000 + "\n")
    assert "larger than" in message


def test_not_utf8(tmp_path: Path) -> None:
    directory = tmp_path / "tc"
    directory.mkdir()
    (directory / "demo.yaml").write_bytes(b"task_class: \xff\xfe\n")
    errors = Registry([directory]).validate()
    assert str(errors[0]).endswith("demo.yaml: file is not UTF-8 text")
