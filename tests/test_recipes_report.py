"""What a recipe run's report says (issue 41 items 3-4): each rule's changes at file and line, with the
rule's own `message:`, in totals that agree with the patch; and `task-classes validate` listing every ast-grep
rule that ast-grep refuses, at its line, in ast-grep's whole words."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli

CLASS = """\
task_class: aliases
version: 1
description: Replace unittest's deprecated aliases, then retitle the TODOs.
recipes:
  - id: aliases@1
    files: ["**/*.py"]
    ast-grep:
      - id: assert-equals
        language: python
        message: assertEquals was removed in Python 3.12
        rule: {pattern: "$S.assertEquals($$$A)"}
        fix: "$S.assertEqual($$$A)"
      - id: assert-not-equals
        language: python
        rule: {pattern: "$S.assertNotEquals($$$A)"}
        fix: "$S.assertNotEqual($$$A)"
  - id: todo@1
    files: ["**/*.py"]
    replace: {pattern: 'TODO: old', with: 'TODO: new'}
"""

TEST_X = """\
import unittest

class T(unittest.TestCase):
    def test_a(self):
        self.assertEquals(1, 1)
        self.assertEquals(2, 2); self.assertNotEquals(1, 2)

    def test_b(self):
        self.assertNotEquals(3, 4)
# TODO: old
"""

RULE_LINE = re.compile(r"^   - `([^`]+)`(?: \(([^)]*)\))?: (\d+) change\(s\): (.*)$")
RECIPE_LINE = re.compile(r"^\d+\. (\S+) \((\S+)\): \d+ file\(s\) considered, (\d+) change\(s\) in (\d+) file\(s\)")


def _places(where: str) -> set[tuple[str, int]]:
    found = set()
    for part in where.split("; "):
        name, _, lines = part.partition(" ")
        for number in lines.removeprefix("lines ").removeprefix("line ").split(", "):
            found.add((name.strip("`"), int(number)))
    return found


def test_the_report_lists_each_rules_changes_with_totals_that_match_the_patch(
        home: Path, tccm_dir: Callable[..., Path], make_repo: Callable[..., Path]) -> None:
    tccm_dir({"aliases": CLASS})
    repo = make_repo({"pkg/test_x.py": TEST_X, "pkg/mod.py": "x = 1\n# TODO: old\n", "README.md": "# TODO: old\n"})
    done = run_cli("dispatch", "aliases", "--repo", str(repo))
    assert done.returncode == 0, done.stderr
    report = done.stdout

    per_rule: dict[str, tuple[str, int, set[tuple[str, int]]]] = {}
    per_recipe: dict[str, int] = {}
    for line in report.splitlines():
        if (m := RECIPE_LINE.match(line)):
            per_recipe[m.group(1)] = int(m.group(3))
        if (m := RULE_LINE.match(line)):
            per_rule[m.group(1)] = (m.group(2) or "", int(m.group(3)), _places(m.group(4)))
    assert per_recipe == {"aliases@1": 4, "todo@1": 2}
    assert per_rule == {
        "assert-equals": ("assertEquals was removed in Python 3.12", 2, {("pkg/test_x.py", 5), ("pkg/test_x.py", 6)}),
        "assert-not-equals": ("", 2, {("pkg/test_x.py", 6), ("pkg/test_x.py", 9)}),
        "todo@1": ("", 2, {("pkg/mod.py", 2), ("pkg/test_x.py", 10)}),  # README.md is not among its files
    }
    # the totals agree: rules add up to their recipe, recipes to the summary
    assert sum(n for _, n, _ in per_rule.values()) == sum(per_recipe.values()) == 6
    assert "6 change(s) in 2 file(s), patched as 3 edit(s)" in report

    # and the lines named are exactly the lines the patch changes
    patch = report[report.index("diff --git"):]
    applied = subprocess.run(["git", "apply", "-"], cwd=repo, input=patch, text=True, capture_output=True)
    assert applied.returncode == 0, applied.stderr
    changed: set[tuple[str, int]] = set()
    for name in ("pkg/test_x.py", "pkg/mod.py", "README.md"):
        before = subprocess.run(["git", "show", f"HEAD:{name}"], cwd=repo, text=True, capture_output=True).stdout
        after = (repo / name).read_text()
        pairs = zip(before.splitlines(), after.splitlines(), strict=True)  # recipes here never add a line
        changed |= {(name, i) for i, (a, b) in enumerate(pairs, 1) if a != b}
    assert changed == set().union(*(places for _, _, places in per_rule.values()))


@pytest.mark.parametrize("fan_out", ["", "work_items: {per: match}"])
def test_a_rule_without_fix_puts_its_message_in_the_blocker(
        home: Path, tccm_dir: Callable[..., Path], make_repo: Callable[..., Path], fan_out: str) -> None:
    tccm_dir({"no-eval": f"""\
        task_class: no-eval
        version: 1
        description: Find eval calls.
        {fan_out}
        recipes:
          - id: no-eval@1
            files: ["**/*.py"]
            ast-grep:
              id: eval-call
              language: python
              message: eval runs arbitrary code; parse the value instead
              rule: {{pattern: "eval($X)"}}
        """})
    repo = make_repo({"app.py": "x = 1\ny = eval(input())\n"})
    done = run_cli("dispatch", "no-eval", "--repo", str(repo))
    assert done.returncode == 8, done.stdout + done.stderr
    blocker = next(line for line in done.stdout.splitlines() if line.startswith("- app.py:2: "))
    assert "rule eval-call (eval runs arbitrary code; parse the value instead) matches `eval(input())`" in blocker
    if fan_out:  # the item a match makes is titled with the rule's message too
        assert "### app.py:2: eval-call (eval runs arbitrary code; parse the value instead)" in done.stdout


def test_validate_lists_every_rule_ast_grep_refuses_with_its_whole_message(tmp_path: Path) -> None:
    folder = tmp_path / "classes"
    folder.mkdir()
    (folder / "bad-rules.yaml").write_text("""\
task_class: bad-rules
version: 1
description: Three rules ast-grep refuses.
recipes:
  - id: bad-rules@1
    files: ["**/*.py"]
    ast-grep:
      - id: misspelt
        language: python
        rule: {patern: "foo($A)"}
        fix: "bar($A)"
      - id: bad-regex
        language: python
        rule: {regex: "(unclosed"}
      - id: bad-language
        language: pythn
        rule: {pattern: foo}
""")
    # PATH without the virtualenv's bin: the ast-grep installed beside the interpreter checks the rules all
    # the same (without it, the check was skipped and the three rules were accepted)
    done = run_cli("task-classes", "validate", str(folder), env={"PATH": "/usr/bin:/bin", "PLANNER_DAEMON": "off"})
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout + done.stderr
    lines = [line for line in out.splitlines() if "bad-rules.yaml:" in line]
    assert len(lines) == 3, out
    misspelt, regex, language = lines
    assert "bad-rules.yaml:8: recipes[0].ast-grep[0]: rule 'misspelt': " in misspelt
    assert "unknown field `patern`, expected one of pattern, kind, regex" in misspelt
    assert "bad-rules.yaml:12: recipes[0].ast-grep[1]: rule 'bad-regex': " in regex
    assert "regex parse error: (unclosed error: unclosed group" in regex  # the cause, not only its heading
    assert "bad-rules.yaml:15: recipes[0].ast-grep[2]: rule 'bad-language': " in language
    assert "untagged enum SgLang" in language and "'pythn'" in language
    assert "Traceback" not in out
