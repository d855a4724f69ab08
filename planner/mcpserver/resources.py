"""The MCP resources: each task class's YAML (tccm://NAME) and each run's report and patch
(run://ID/report, run://ID/patch), listed so a host can browse them."""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver.exceptions import ResourceError
from mcp.types import Resource

from planner.config import Settings
from planner.errors import PlannerError

RUN_FILES = {"report": ("report.md", "text/markdown"), "patch": ("patch.diff", "text/x-diff")}
LISTED_RUNS = 50  # the newest runs listed; older ones stay readable by URI


def task_class_yaml(name: str) -> str:
    from planner import service

    try:
        tccm = service.task_class(Settings.from_env(), name)
        return Path(tccm.path).read_text(encoding="utf-8")
    except PlannerError as exc:
        raise ResourceError(exc.message) from None
    except OSError as exc:
        raise ResourceError(f"cannot read the task class {name}: {exc.strerror}") from None


def run_file(run_id: str, what: str) -> str:
    from planner.run.agent import resolve_id
    from planner.store.runs import RunStore

    settings = Settings.from_env()
    try:
        full = resolve_id(settings, run_id)
    except PlannerError as exc:
        raise ResourceError(exc.message) from None
    path = RunStore(settings.home).artifacts(full) / RUN_FILES[what][0]
    if not path.is_file():
        raise ResourceError(f"run {full} has no {what} (yet)")
    return path.read_text(encoding="utf-8")


def listed() -> list[Resource]:
    """The task classes in service and the newest runs' reports and patches."""
    from planner import service
    from planner.store.runs import RunStore

    settings = Settings.from_env()
    found = [Resource(uri=f"tccm://{name}", name=name, mime_type="application/yaml",
                      description=f"the task class {name} (TCCM YAML)")
             for name in service.registry(settings).names()]
    if not (settings.home / "runs.sqlite").exists():
        return found
    runs = RunStore(settings.home, readonly=True)
    try:
        rows = runs.summaries()[-LISTED_RUNS:]
    finally:
        runs.close()
    for row in reversed(rows):
        folder = runs.artifacts(row["id"])
        for what, (file, mime) in RUN_FILES.items():
            if (folder / file).is_file():
                found.append(Resource(uri=f"run://{row['id']}/{what}", name=f"{row['id']} {what}", mime_type=mime,
                                      description=f"{row['task_class']} on {row['repo']}: {row['status']}"))
    return found
