"""Past needs_llm without a model: `planner runs answer` and `planner examples add`; recipe validation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli

from planner.config import Settings
from planner.patch.parse import PatchError, edits_from_patch
from planner.patch.plan import apply_edits
from planner.run.dispatch import dispatch
from planner.ui.home import Home
from planner.ui.views import run_page

TITLE = """
task_class: readme-title
version: 1
description: Give the README a title that names the project.
worker: Replace the first heading of README.md with "# <project name>".
must_read:
  - glob: README.md
budget: {max_files: 5, max_tokens: 4000, per_file_max_tokens: 1000}
"""
README = "# old title\n\nSome text.\n"
FIX = ("diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n-# old title\n"
       "+# widget\n \n Some text.\n")


def test_answer_a_needs_llm_run_with_a_plan(home: Path, tccm_dir: Callable[..., Path],
                                            make_repo: Callable[..., Path], tmp_path: Path) -> None:
    tccm_dir({"readme-title": TITLE})
    repo = make_repo({"README.md": README})
    first = run_cli("dispatch", "readme-title", "--repo", str(repo))
    assert first.returncode != 0 and "prompt-task.md" in first.stderr and "planner runs answer" in first.stderr
    run_id = dispatch(Settings.from_env(), "readme-title", repo, {}, {})["run_id"]
    page = run_page(Home(Settings.from_env().home), run_id)
    assert [Path(p).name for p in page["prompts"]] == ["prompt-task.md"]  # the run page names the saved prompt
    bad = tmp_path / "bad.yaml"
    bad.write_text("summary: x\nedits: [{file: README.md, old: '# nope', new: '# widget'}]\n")
    rejected = run_cli("runs", "answer", run_id, "--plan", str(bad))
    assert rejected.returncode != 0 and "nope" in rejected.stdout + rejected.stderr  # the same checks
    good = tmp_path / "plan.json"
    good.write_text('{"summary": "title", "edits": [{"file": "README.md", "old": "# old title", "new": "# widget"}]}')
    done = run_cli("runs", "answer", run_id, "--plan", str(good))
    assert done.returncode == 0, done.stderr
    assert "+# widget" in done.stdout
    schema = tmp_path / "schema.yaml"
    schema.write_text("summary: x\nedits: [{path: README.md}]\n")
    refused = run_cli("runs", "answer", run_id, "--plan", str(schema))
    assert refused.returncode != 0 and "edits.0" in refused.stderr


def test_examples_add_serves_the_next_run(home: Path, tccm_dir: Callable[..., Path],
                                          make_repo: Callable[..., Path], tmp_path: Path) -> None:
    tccm_dir({"readme-title": TITLE})
    repo = make_repo({"README.md": README})
    patch = tmp_path / "fix.diff"
    patch.write_text(FIX)
    added = run_cli("examples", "add", "readme-title", "--repo", str(repo), "--patch", str(patch))
    assert added.returncode == 0, added.stderr
    state = dispatch(Settings.from_env(), "readme-title", repo, {}, {})
    assert state["status"] == "succeeded" and "+# widget" in state["patch"]
    assert [s["outcome"] for s in state["stages"]][-1] == "retrieved"
    patch.write_text(FIX.replace("old title", "other title"))
    refused = run_cli("examples", "add", "readme-title", "--repo", str(repo), "--patch", str(patch))
    assert refused.returncode != 0 and "does not apply" in refused.stderr


def test_edits_from_patch_round_trip() -> None:
    text = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
    patch = ("--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n a\n+a2\n b\n@@ -8,3 +9,2 @@\n h\n-i\n j\n")
    edits = edits_from_patch(patch)
    assert [(e.line, e.old) for e in edits] == [(1, "a\nb\n"), (9, "h\ni\nj\n")]
    assert apply_edits(lambda _: text, edits)["x"][1] == "a\na2\nb\nc\nd\ne\nf\ng\nh\nj\n"
    with pytest.raises(PatchError):
        edits_from_patch("--- /dev/null\n+++ b/new\n@@ -0,0 +1 @@\n+x\n")


BAD = """
task_class: {name}
version: 1
description: x
budget: {{max_files: 1, max_tokens: 100, per_file_max_tokens: 100}}
recipes:
{recipes}
"""


@pytest.mark.parametrize(("recipes", "line", "message"), [
    ("  - id: run@1\n    files: ['*.py']\n    command: {run: [ruff]}", 8, "needs policy.side_effects"),
    ("  - id: nover\n    files: ['*.py']\n    replace: {pattern: a, with: b}", 6, "must be name@version"),
    ("  - id: two@1\n    files: ['*.py']\n    replace: {pattern: a, with: b}\n    command: {run: [x]}", 6,
     "exactly one of 'ast-grep', 'replace' or 'command'"),
    ("  - id: ag@1\n    files: ['*.py']\n    ast-grep: {id: r, language: python, rule: {pattern: a}, fixx: b}", 8,
     "unknown ast-grep rule field(s) fixx"),
    ("  - id: re@1\n    files: ['*.py']\n    replace: {pattern: '(', with: b}", 8, "does not compile"),
    ("  - id: nofiles@1\n    replace: {pattern: a, with: b}", 6, "exactly one of 'files'"),
    ("  - id: key@1\n    files_of: nosuch.key\n    replace: {pattern: a, with: b}", 7, "unknown RepoContext key"),
    ("  - id: ag@1\n    files: ['*.py']\n    ast-grep:\n      - {id: ok, language: python, rule: {pattern: a}}\n"
     "      - {id: typo, language: python, rule: {patern: a}}", 10,
     "refuses the rule: Fail to parse yaml as RuleConfig: unknown field `patern`"),
])
def test_recipe_validation_errors_name_file_and_line(tmp_path: Path, home: Path, recipes: str, line: int,
                                                     message: str) -> None:
    path = tmp_path / "bad-recipe.yaml"
    path.write_text(BAD.format(name="bad-recipe", recipes=recipes).lstrip())
    done = run_cli("task-classes", "validate", str(path))
    assert done.returncode != 0
    assert f"bad-recipe.yaml:{line}:" in done.stderr and message in done.stderr, done.stderr
