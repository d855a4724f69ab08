"""`planner task-classes list | show | validate | schema | surface`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from planner import service
from planner.cli.output import console, emit_json, error_line
from planner.config import Settings
from planner.errors import ExitCode
from planner.flow import mermaid
from planner.queries import task_class_rows
from planner.tccm import surface as surfaces
from planner.tccm.model import BANDS, TCCM, TCCMDocument

app = typer.Typer(help="List, show, validate task classes (TCCM files).", no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def _display(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


@app.command("list")
def list_command(as_json: JsonOpt = False) -> None:
    """Every task class in service, with its version and whether it is valid."""
    rows = task_class_rows(service.registry(Settings.from_env()))
    if as_json:
        emit_json(rows)
        return
    table = Table("task class", "version", "must/should/may", "tokens/files", "flow", "policy", "file in service",
                  "description", "inputs (* required)")
    table.columns[0].no_wrap = True
    table.columns[5].max_width = 40
    table.columns[7].max_width = 50
    for row in rows:
        if not row["valid"]:
            table.add_row(str(row["task_class"]), "-", "-", "-", "-", "-", "-",
                          "[red]invalid[/red]: " + escape(row["errors"][0]), "-")
            continue
        budget = row["budget"]
        bands = f"{row['must_read']}/{row['should_read']}/{row['may_read']}"
        description = str(row["description"]).split(". ")[0]
        shown = _display(str(row["path"])) + "".join(f"\n(overrides {p})" for p in row["overrides"])
        table.add_row(str(row["task_class"]), str(row["version"]), bands,
                      f"{budget['max_tokens']}/{budget['max_files']}", _flow_cell(row["flow"]),
                      escape(str(row["policy"])), escape(shown), description, escape(_inputs_cell(row["inputs"])))
    console.print(table)


def _inputs_cell(inputs: dict[str, dict[str, object]]) -> str:
    """`title*, package`: the inputs a run may pass (`--input NAME=VALUE`), required ones starred."""
    return ", ".join(name + ("*" if spec.get("required") else "") for name, spec in inputs.items()) or "—"


def _flow_cell(flow: dict[str, Any] | None) -> str:
    """`7 states` (`, 3 inherited`), or — for a class that runs the chain's single plan."""
    if flow is None:
        return "—"
    inherited = len(flow["inherited"])
    return f"{flow['states']} states" + (f", {inherited} inherited" if inherited else "")


def _show_flow(tccm: TCCM, diagram: bool) -> None:
    flow = tccm.flow
    if flow is None:
        console.print("flow: none (one plan from the chain: recipe, solved example or LLM)")
        return
    limit = f", at most {flow.max_steps} steps" if flow.max_steps else ""
    console.print(f"flow: start at {flow.start}{limit}")
    table = Table("state", "type", "exits", "does", "from")
    for name, state in flow.states.items():
        exits = [f"{t.when or t.description} → {t.next}" for t in state.transitions or ()]
        exits += [f"default → {state.default}"] if state.default else []
        exits += [f"→ {state.next}"] if state.next else []
        does = state.effect or state.note or state.problem or state.instructions or state.description or ""
        if state.may_read or state.examples:
            does = ", ".join([*(state.may_read or []), *([f"{state.examples} solved example(s)"] if state.examples
                                                         else [])])
        table.add_row(name, state.type, escape("\n".join(exits)), escape(does.strip().split("\n")[0][:80]),
                      escape(tccm.flow_origin.get(name, tccm.task_class)))
    console.print(table)
    if diagram:
        sys.stdout.write(mermaid.render(flow))  # plain text: paste into a Mermaid renderer


@app.command("show")
def show_command(
    name: str, as_json: JsonOpt = False,
    diagram: Annotated[bool, typer.Option("--mermaid", help="Also print the flow as a Mermaid flowchart.")] = False,
) -> None:
    """One task class, resolved (extends applied), with every entry and its reason, and its flow."""
    tccm = service.task_class(Settings.from_env(), name)
    if as_json and diagram:
        emit_json({**tccm.model_dump(mode="json"), "mermaid": mermaid.render(tccm.flow) if tccm.flow else None})
        return
    if as_json:
        emit_json(tccm.model_dump(mode="json"))
        return
    console.print(f"[bold]{tccm.task_class}[/bold] v{tccm.version}  ({tccm.path})")
    console.print(tccm.description.strip())
    if tccm.extends:
        console.print(f"extends: {tccm.extends}")
    budget = tccm.budget
    console.print(f"budget: {budget.max_tokens} tokens, {budget.max_files} files, "
                  f"{budget.per_file_max_tokens} tokens per file")
    table = Table("band", "selector", "reason")
    for band in BANDS:
        for entry in tccm.band(band):
            table.add_row(band, entry.selector, entry.reason or "")
    for pattern in tccm.bootstrap_globs:
        table.add_row("bootstrap", f"glob:{pattern}", "used when the repo has no RepoContext")
    console.print(table)
    for line in surfaces.lines(surfaces.describe(tccm)):
        print(line)
    _show_recipes(tccm)
    _show_flow(tccm, diagram)


def _show_recipes(tccm: TCCM) -> None:
    """The recipes, in the order they run, and how the class fans out."""
    if not tccm.recipes:
        return
    print("recipes (run in order, before solved examples and the LLM):")
    for recipe in tccm.recipes:
        where = ", ".join(recipe.files or ()) if recipe.files is not None else f"files_of {recipe.files_of}"
        rules = f" rules {', '.join(str(r.get('id')) for r in recipe.ast_grep)}" if recipe.ast_grep else ""
        print(f"  {recipe.id}  {recipe.kind}{rules}  on {where}")
    if tccm.work_items is not None:
        print(f"work items: one per {tccm.work_items.per} of {tccm.work_items.of or 'the recipes files'}")


@app.command("surface")
def surface_command(name: str, as_json: JsonOpt = False) -> None:
    """What a run of this task class may do: files, kinds, version bumps, side-effects (its policy)."""
    described = surfaces.describe(service.task_class(Settings.from_env(), name))
    if as_json:
        emit_json(described)
        return
    for line in surfaces.lines(described):
        print(line)


@app.command("validate")
def validate_command(
    paths: Annotated[list[Path] | None, typer.Argument(help="TCCM files or directories (default: all in service).")]
    = None,
    as_json: JsonOpt = False,
) -> None:
    """Check TCCM files strictly. Exit 0 when all are valid, 1 otherwise."""
    registry = service.registry(Settings.from_env())
    errors = registry.validate_files(paths) if paths else registry.validate()
    checked = sum(_file_count(p) for p in paths) if paths else len(registry.names())
    names = registry.names() if not paths else sorted({s.document.task_class for s in registry.sources
                                                       if s.document and any(s.path.resolve() == p.resolve()
                                                                             or p.resolve() in s.path.resolve().parents
                                                                             for p in paths)})
    notices = [n for name in names for n in registry.notices(name)]
    if as_json:
        emit_json({"valid": not errors, "checked": checked, "errors": [e.as_dict() for e in errors],
                   "notices": notices})
    else:
        for error in errors:
            error_line(str(error))
        for notice in notices:
            print(f"note: {notice}")  # one line each, never wrapped
        if not errors:
            console.print(f"ok: {checked} task class file(s) valid")
    if errors:
        raise typer.Exit(int(ExitCode.INVALID))


def _file_count(path: Path) -> int:
    """The TCCM files a validate argument names: a directory's *.yaml and *.yml, else the file itself."""
    return len([*path.glob("*.yaml"), *path.glob("*.yml")]) if path.is_dir() else 1


@app.command("schema")
def schema_command(as_json: JsonOpt = True) -> None:
    """The JSON Schema of a TCCM file, for editors (e.g. yaml-language-server)."""
    schema = TCCMDocument.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Task-Class Context Manifest"
    print(json.dumps(schema, indent=2, sort_keys=True))
