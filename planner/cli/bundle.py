"""`planner bundle TASK_CLASS --repo PATH`: build, record and show a Context Bundle."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from planner import service
from planner.bundle.model import BundleEntry
from planner.cli.output import console, emit_json, parse_inputs
from planner.config import Settings
from planner.run.preview import build_view
from planner.store.provenance import ProvenanceRecord

STATUS_STYLE = {
    "included": "green", "excerpt": "green", "truncated": "yellow", "deferred": "magenta", "listed": "cyan",
    "missing": "red", "denied": "bold red", "duplicate": "dim", "skipped": "dim", "requested": "blue",
    "per_item": "dim cyan",
}


def entries_table(entries: list[BundleEntry], title: str | None = None) -> Table:
    table = Table("band", "selector", "status", "tokens", "source", "reason / detail", title=title)
    for entry in entries:
        style = STATUS_STYLE.get(entry.status, "")
        tokens = str(entry.tokens) if entry.tokens else ""
        if entry.tokens_needed is not None and entry.status != "included":
            tokens = f"{tokens}/{entry.tokens_needed}" if tokens else f"~{entry.tokens_needed}"
        target = entry.target if entry.kind != "selector" else entry.selector
        shown = f"{entry.selector}" if target in entry.selector else f"{entry.selector} → {target}"
        note = " — ".join(x for x in (entry.reason, entry.detail) if x)
        table.add_row(entry.band, escape(shown), f"[{style}]{entry.status}[/{style}]" if style else entry.status,
                      tokens, entry.source, escape(note))  # selectors hold [field=value]: not rich markup
    return table


def print_record(record: ProvenanceRecord) -> None:
    repo = record.repocontext
    console.print(f"[bold]{record.task_class}[/bold] v{record.tccm.version}  mode: {record.mode}  "
                  f"record: {record.id}")
    console.print(f"TCCM {record.tccm.path} (sha256 {record.tccm.sha256[:12]})")
    console.print(f"RepoContext: {repo.commit or 'none'} gathered {repo.gathered_at or '-'} ({repo.freshness})")
    if record.sandbox:
        console.print(escape(f"programs ran in sandbox: {record.sandbox}"))
    console.print(entries_table(record.entries, "run-level bundle" if record.item_bundles else None))
    for item in record.item_bundles:
        totals = item.get("totals") or {}
        title = (f"work item {item['item']}: {totals.get('tokens', 0)}/{totals.get('max_tokens', 0)} tokens, "
                 f"{totals.get('files', 0)}/{totals.get('max_files', 0)} files")
        console.print(entries_table([BundleEntry.model_validate(e) for e in item.get("entries", [])], escape(title)))
    for stage in record.stages:
        console.print(escape(f"stage {stage.stage} [{getattr(stage, 'item', '-')}]: {stage.outcome} — {stage.reason}"))
        for read in getattr(stage, "reads", None) or []:
            console.print(escape(f"    read {read['file']} whole ({read['why']}): {read['outcome']}"))
    for req in record.requests:
        console.print(f"request {req.get('entry')} by {req.get('by')}: {req.get('outcome')} "
                      f"({req.get('tokens', 0)} tokens)")
    for note in record.decisions:
        nodes = f" on {', '.join(note.get('affected_nodes') or [])}" if note.get("affected_nodes") else ""
        console.print(escape(f"decision {note.get('decision_type')}{nodes}: {note.get('decision')} — "
                             f"{note.get('rationale')} ({note.get('at', '-')})"))
    for call in record.llm_calls:
        console.print(f"llm {call.get('model')}: {call.get('tokens_in')} in / {call.get('tokens_out')} out, "
                      f"cost {call.get('cost_usd') if call.get('cost_usd') is not None else 'unknown'}")
    totals = record.totals
    console.print(
        f"total: {totals.tokens}/{totals.max_tokens} tokens, {totals.files}/{totals.max_files} files "
        f"(per-file cap {totals.per_file_max_tokens}; header {totals.header_tokens}) — "
        + ", ".join(f"{n} {s}" for s, n in totals.by_status.items())
    )


OVERVIEW_NOTE = service.OVERVIEW_NOTE


def bundle_command(
    task_class: Annotated[str, typer.Argument(help="The task class (see `planner task-classes list`).")],
    repo: Annotated[Path, typer.Option(help="The repository.")] = Path("."),
    inputs: Annotated[list[str] | None, typer.Option("--input", "-i", help="Run input NAME=VALUE.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the provenance record and bundle as JSON.")] = False,
    show_text: Annotated[bool, typer.Option("--text", help="Also print the rendered bundle.")] = False,
) -> None:
    """Build the Context Bundle a task class would get, record its provenance and show it."""
    settings = Settings.from_env()
    bundle, _tccm, provenance, overview = build_view(settings, task_class, repo, parse_inputs(inputs or []))
    path = service.record(settings, provenance)
    if as_json:
        extra = {} if overview is None else {"overview": overview, "overview_note": OVERVIEW_NOTE}
        emit_json({"record_path": str(path), **provenance.model_dump(mode="json"), **extra, "text": bundle.text})
        return
    print_record(provenance)
    if overview is not None:
        console.print(f"\n{OVERVIEW_NOTE}")
        for line in overview:
            console.print(f"  {line}", markup=False, highlight=False)
    if show_text:
        sys.stdout.write("\n" + bundle.text)
