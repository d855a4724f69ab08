"""The recipe engine's parts on their own: ast-grep's full rule format (utils, constraints, transform),
rules without a fix, regex replacements, block edits."""

from __future__ import annotations

from planner.patch.plan import apply_edits
from planner.recipes import astgrep, textreplace
from planner.recipes.edits import file_edits
from planner.tccm.recipes import Replace

RENAME = {
    "id": "rename-old", "language": "python",
    "utils": {"old-call": {"kind": "call", "has": {"field": "function", "regex": "^old_"}}},
    "rule": {"matches": "old-call", "pattern": "$NAME($$$ARGS)"},
    "constraints": {"NAME": {"regex": "^old_"}},
    "transform": {"NEW": {"replace": {"source": "$NAME", "replace": "^old_", "by": "new_"}}},
    "fix": "$NEW($$$ARGS)",
}


def test_ast_grep_utils_constraints_transform_and_nesting() -> None:
    texts = {"a.py": "x = old_f(old_g(1), 2)\ny = keep(3)\n", "b.txt": "old_f(1)\n"}
    done = astgrep.run([RENAME], texts)
    assert done.texts["a.py"] == "x = new_f(new_g(1), 2)\ny = keep(3)\n"  # the inner call on a later round
    assert done.texts["b.txt"] == "old_f(1)\n"  # not Python: ast-grep does not parse it
    assert len(done.applied) == 2 and done.rounds >= 2


def test_a_rule_without_fix_reports_findings() -> None:
    rule = {"id": "eval", "language": "python", "rule": {"pattern": "eval($X)"}}
    done = astgrep.run([rule], {"m.py": "a = 1\nb = eval(s)\n"})
    assert done.texts["m.py"] == "a = 1\nb = eval(s)\n"
    assert [(f.file, f.line, f.rule) for f in done.findings] == [("m.py", 2, "eval")]


def test_replace_counts_only_real_changes() -> None:
    spec = Replace.model_validate({"pattern": r"^python (?P<v>3\.\d+)$", "with": r"python 3.12", "count": 0})
    new, where = textreplace.run(spec, {"f": "python 3.12\npython 3.10\nx\npython 3.9\n"})
    assert new["f"] == "python 3.12\npython 3.12\nx\npython 3.12\n" and where == {"f": [2, 4]}


def test_block_edits_apply_in_order() -> None:
    before = "a\nb\nc\nd\ne\n"
    after = "a\nB\nB2\nc\ne\nf\n"
    edits = file_edits("x", before, after, "r")
    assert apply_edits(lambda _: before, edits)["x"][1] == after
    assert apply_edits(lambda _: "top\n", file_edits("x", "top\n", "new\ntop\n", "r"))["x"][1] == "new\ntop\n"
