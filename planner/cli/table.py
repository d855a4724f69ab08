"""The commands of `planner`: name → (target, help), read by the typer app (planner/cli/commands.py) and,
before anything else is imported, by the console entry point (its code cache is kept per command).

A target naming a typer.Typer is a command group, a function a single command. To add a command, add one
row; its module is imported only when it runs.
"""

COMMANDS: dict[str, tuple[str, str]] = {
    "task-classes": ("planner.cli.task_classes:app", "List, show, validate task classes (TCCM files)."),
    "runs": ("planner.cli.runs:app", "Dispatched runs and recorded bundle builds."),
    "hooks": ("planner.cli.hooks:app", "Git hooks that re-gather after commit, merge and rewrite."),
    "learn": ("planner.cli.learn:app", "Usefulness telemetry (Stage 7): which TCCM entries helped."),
    "hotviews": ("planner.cli.hotviews:app", "Hot views: pre-rendered bundle slices in Redis."),
    "portfolio": ("planner.cli.portfolio:app", "Run a task class across many repositories."),
    "gather": ("planner.cli.gather_command:gather_command", "Snapshot a repository into a RepoContext."),
    "bundle": ("planner.cli.bundle:bundle_command", "Build, record and show a task class's Context Bundle."),
    "dispatch": ("planner.cli.dispatch:dispatch_command", "Run a task class on a repository."),
    "provenance": ("planner.cli.runs:provenance_command", "Show the provenance record of a run or bundle build."),
    "worker": ("planner.cli.worker:worker_command", "Serve portfolio runs from a Celery broker."),
    "ui": ("planner.cli.ui:ui_command", "A read-only local web UI over runs, bundles and provenance."),
    "advisories": ("planner.cli.advisories:app", "The OSV advisory snapshot: sync it from osv.dev, show it."),
    "examples": ("planner.cli.examples:app", "Solved examples the RAG stage serves (seed one from a patch)."),
    "mcp": ("planner.cli.mcp:mcp_command", "An MCP server for agents (stdio, or --http): bundles, decisions, runs."),
    "daemon": ("planner.cli.daemon:app", "A warm process later commands are handed to (no start-up imports)."),
}
