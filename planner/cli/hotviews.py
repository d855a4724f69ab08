"""`planner hotviews list | warm REPO | stats`: the pre-rendered slices in Redis."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from planner import service
from planner.cli.output import console, emit_json
from planner.config import Settings
from planner.errors import EnvironmentProblem
from planner.hotviews import bundles, naming, slices, stats, tccms
from planner.hotviews.store import HotViews
from repocontext.store import RepoContextStore

app = typer.Typer(help="Hot views: pre-rendered bundle slices in Redis, per repository and commit.",
                  no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
EMBEDDED_NOTE = "embedded Redis: in-process, gone when this command exits (set PLANNER_REDIS_URL to share it)"


@app.command("list")
def list_command(
    repo: Annotated[Path | None, typer.Option(help="Also show what is warmed for this repository.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """The slices to pre-render, from the must_read entries of the TCCMs in service, most shared first."""
    settings = Settings.from_env()
    in_service = tccms.in_service(settings)
    specs = slices.slice_set(in_service)
    warmed: dict[str, int] | None = None
    if repo is not None:
        root = service.repo_root(repo)
        snap = naming.snapshot(RepoContextStore(settings.home), root)
        hot = HotViews.open(settings)
        warmed = hot.warmed(snap, naming.tccm_set(in_service)) if snap else {}
        if hot.error:
            raise EnvironmentProblem(f"hot views: Redis unavailable ({hot.error})")
    rows: list[dict[str, Any]] = [
        {"rank": i + 1, "key": s.key, "task_classes": list(s.task_classes), "inputs": list(s.inputs),
         **({"warmed": (warmed or {}).get(s.key, 0)} if warmed is not None else {})} for i, s in enumerate(specs)]
    if as_json:
        emit_json({"tccm_set": naming.tccm_set(in_service), "slices": rows})
        return
    table = Table("rank", "slice (must_read key)", "task classes", "per input", *(["warmed"] if warmed is not None
                                                                                    else []))
    for row in rows:
        extra = [str(row["warmed"])] if warmed is not None else []
        table.add_row(str(row["rank"]), row["key"], f"{len(row['task_classes'])}: {', '.join(row['task_classes'])}",
                      ", ".join(row["inputs"]) or "-", *extra)
    console.print(table)


@app.command("warm")
def warm_command(
    repo: Annotated[Path, typer.Argument(help="A gathered repository.")],
    with_bundles: Annotated[bool, typer.Option("--bundles", help="Also build and store each task class's "
                                                                 "bundle with no inputs.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Pre-render the slice set for the repository's latest RepoContext (`planner gather` does this too)."""
    settings = Settings.from_env()
    report = bundles.warm(settings, service.repo_root(repo), bundles=with_bundles)
    if report.error:
        raise EnvironmentProblem(f"hot views: Redis unavailable ({report.error})")
    if as_json:
        emit_json(report.model_dump())
        return
    console.print(f"warmed {report.repo} at {report.commit[:12]}: {report.slices} slices from {report.templates} "
                  f"keys ({report.bytes} bytes; {report.carried} unchanged since the last warm), "
                  f"{report.bundles} bundles, {report.removed_keys} old keys removed, TTL {report.ttl_s} s, "
                  f"{report.elapsed_ms} ms")
    console.print(f"backend: {EMBEDDED_NOTE if report.backend == 'embedded' else report.backend}")


@app.command("stats")
def stats_command(as_json: JsonOpt = False) -> None:
    """Slices, keys, hit/miss ratios and memory of the hot views."""
    result = stats.collect(HotViews.open(Settings.from_env()))
    if as_json:
        emit_json(result.as_json())
    if not result.reachable:
        raise EnvironmentProblem(f"hot views: Redis unavailable ({result.error})")
    if as_json:
        return
    shown = EMBEDDED_NOTE if result.backend == "embedded" else result.backend
    console.print(f"backend: {shown}  renderer: {result.renderer}")
    console.print(f"keys: {result.keys}  repositories: {result.repos}  snapshots: {result.snapshots}  "
                  f"slices: {result.slices}  bundles: {result.bundles}")
    console.print(f"slices: {result.slice_hits} hits / {result.slice_misses} misses (ratio {result.slice_hit_ratio})  "
                  f"bundles: {result.bundle_hits} hits / {result.bundle_misses} misses "
                  f"(ratio {result.bundle_hit_ratio})  warms: {result.warms}")
    used = f"{result.server_used_memory} bytes" if result.server_used_memory is not None else "n/a"
    console.print(f"memory: {result.value_bytes} bytes of values; server used_memory: {used}")
