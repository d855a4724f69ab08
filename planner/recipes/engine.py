"""Running a TCCM's recipes on a repository: each in order, each on the result of the ones before it.

Files come from the repository view (what the bundle builder sees: no secrets, no links), chosen by the
recipe's `files:` globs or `files_of:` key; a work item that names a file narrows every recipe to it.
Nothing is written to the repository: the result is the files' new texts, turned into the plan's edits.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planner.bundle import files_of, keys
from planner.bundle.view import RepoView, read_repo_file
from planner.recipes import astgrep, command, textreplace
from planner.tccm.recipes import Recipe
from repocontext.secrets import redact

_REF = re.compile(r"\$\{inputs\.([A-Za-z_][A-Za-z0-9_]*)\}")


class RecipeError(RuntimeError):
    """A recipe that cannot run: a missing input, a bad rule, a command that is not installed."""


@dataclass
class Row:
    """One recipe's line in the report: what it looked at and what it did."""

    id: str
    kind: str
    files: int = 0  # files it was given
    changed: list[str] = field(default_factory=list)
    matches: int = 0  # replacements made (ast-grep fixes, regex substitutions, files a command changed)
    # each of them: {file, line, rule, message} (a command's: its file, line None, rule the recipe's id); the
    # report lists them rule by rule, so its lines and its totals are the same count
    changes: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)  # matches of ast-grep rules without a fix
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


@dataclass
class Result:
    before: dict[str, str] = field(default_factory=dict)
    after: dict[str, str] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)

    @property
    def changed(self) -> list[str]:
        return sorted(p for p in self.after if self.after[p] != self.before.get(p))


def substitute(value: Any, inputs: Mapping[str, str], recipe_id: str) -> Any:
    """${inputs.NAME} replaced in every string of a recipe; an input the run lacks is an error, not ''."""
    if isinstance(value, str):
        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in inputs:
                raise RecipeError(f"recipe {recipe_id} uses ${{inputs.{name}}}, but the run has no input {name} "
                                  f"(--input {name}=VALUE)")
            return inputs[name]
        return _REF.sub(one, value)
    if isinstance(value, list):
        return [substitute(v, inputs, recipe_id) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, inputs, recipe_id) for k, v in value.items()}
    return value


def select(recipe: Recipe, view: RepoView, inputs: Mapping[str, str], scope: set[str] | None) -> list[str]:
    """The repository files a recipe applies to, in a stable order, narrowed to the item's files."""
    if recipe.files is not None:
        found = {p for glob in substitute(recipe.files, inputs, recipe.id) for p in view.paths.match(glob)}
    elif view.context is None:
        raise RecipeError(f"recipe {recipe.id} reads files_of {recipe.files_of}, but the repository has no "
                          "RepoContext yet (run planner gather)")
    else:
        resolved = keys.resolve(view.context, str(recipe.files_of), inputs)
        found = {n.path for n in files_of.named_files(resolved.value)} if resolved.found else set()
    found = {p for p in found if p in view.sizes and p not in view.denied}
    return sorted(found if scope is None else found & scope)


def _read(root: Path, paths: Sequence[str], current: dict[str, str],
          before: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """(texts, why each file that could not be read was skipped: binary, too large, a link, gone)."""
    texts, skipped = {}, []
    for path in paths:
        if path not in current:
            read = read_repo_file(root, path, exact=True)
            if read.text is None:
                skipped.append(f"skipped {path}: {read.detail or read.status}")
                continue
            current[path] = before[path] = read.text
        texts[path] = current[path]
    return texts, skipped


def _one(recipe: Recipe, texts: dict[str, str], root: Path, network: bool, inputs: Mapping[str, str],
         edited: Mapping[str, str]) -> tuple[dict[str, str], Row]:
    row = Row(id=recipe.id, kind=recipe.kind, files=len(texts))
    spec = substitute(recipe.model_dump(by_alias=True, exclude_none=True), inputs, recipe.id)
    if recipe.ast_grep is not None:
        try:
            done = astgrep.run(spec["ast-grep"], texts)
        except astgrep.AstGrepError as exc:
            raise RecipeError(f"recipe {recipe.id}: {exc}") from None
        row.changes = [{"file": f.file, "line": f.line, "rule": f.rule, "message": f.message}
                       for f in sorted(done.applied, key=lambda f: (f.rule, f.file, f.line))]
        row.matches = len(row.changes)
        row.findings = [{"file": f.file, "line": f.line, "rule": f.rule, "text": f.text[:200], "message": f.message}
                        for f in done.findings]
        return done.texts, row
    if recipe.replace is not None:
        replace = Recipe.model_validate(spec).replace
        assert replace is not None  # the recipe's own, its inputs substituted
        new, where = textreplace.run(replace, texts)
        row.changes = [{"file": path, "line": n, "rule": recipe.id, "message": ""}
                       for path, lines in sorted(where.items()) for n in lines]
        row.matches = len(row.changes)
        return new, row
    argv = Recipe.model_validate(spec).command
    assert argv is not None  # exactly one kind (model.py): neither ast-grep nor replace, so a command
    try:
        ran = command.run(argv, root, set(texts), network, edited)
    except command.CommandError as exc:
        raise RecipeError(f"recipe {recipe.id}: {exc}") from None
    if ran.exit_code:  # a crash is a failure of the item, never "nothing to do"
        tail = " | ".join(line for line in redact(ran.output).strip().splitlines()[-5:])
        raise RecipeError(f"recipe {recipe.id}: `{' '.join(spec['command']['run'])}` exited {ran.exit_code}"
                          + (f"; its last output: {tail}" if tail else " with no output"))
    row.changes = [{"file": path, "line": None, "rule": recipe.id, "message": ""}
                   for path in sorted(ran.texts) if ran.texts[path] != texts.get(path)]
    row.matches = len(row.changes)
    row.notes += [f"changed {p} outside its files: (left out of the patch)" for p in ran.outside]
    row.notes += [f"created {p} (left out: recipes edit existing files)" for p in ran.created]
    return {**texts, **ran.texts}, row


def run(recipes: Sequence[Recipe], root: Path, view: RepoView, inputs: Mapping[str, str],
        scope: set[str] | None = None, network: bool = False) -> Result:
    result = Result()
    for recipe in recipes:
        started = time.perf_counter()
        paths = select(recipe, view, inputs, scope)
        texts, skipped = _read(root, paths, result.after, result.before)
        edited = {p: t for p, t in result.after.items() if t != result.before.get(p)}  # earlier recipes' edits
        new, row = _one(recipe, texts, root, network, inputs, edited) if texts else (texts, Row(recipe.id,
                                                                                               recipe.kind))
        row.notes += skipped[:5] + ([f"... and {len(skipped) - 5} more skipped"] if len(skipped) > 5 else [])
        for path, text in new.items():
            if text != result.after[path]:
                row.changed.append(path)
                result.after[path] = text
        row.seconds = round(time.perf_counter() - started, 3)
        result.rows.append(row)
    return result
