"""`planner gather REPO`: run the probes and store the RepoContext.

The hottest command skips typer when its arguments are plain (`fast`, called by the console script before
anything else is imported): typer and click cost ~40 ms of a small repository's ~0.3 s gather. Anything
else (help, a typo, an unknown option) goes through typer as every command does.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from planner.cli.output import console, guarded
from planner.config import Settings
from repocontext import git


def fast(argv: list[str]) -> int | None:
    """Run `planner gather ARGV` without typer when ARGV is `REPO [--advisories PATH]... [--json]` in any
    order; None (run it through typer) for anything else."""
    repo: Path | None = None
    advisories: list[Path] = []
    as_json = False
    args = iter(argv)
    for arg in args:
        if arg == "--json":
            as_json = True
        elif arg == "--advisories":
            value = next(args, None)
            if value is None or value.startswith("-"):
                return None
            advisories.append(Path(value))
        elif arg.startswith("--advisories="):
            advisories.append(Path(arg.partition("=")[2]))
        elif arg.startswith("-") or repo is not None:
            return None
        else:
            repo = Path(arg)
    if repo is None:
        return None
    guarded(lambda: run_gather(repo, advisories, as_json), as_json)
    return 0


def run_gather(repo: Path, advisories: list[Path] | None, as_json: bool) -> None:
    """Snapshot a repository into a RepoContext (stored under PLANNER_HOME)."""
    git.prefetch(repo)  # git lists the tree while the probes are imported
    from planner import service
    from repocontext.model import RepoContext

    settings = Settings.from_env()
    # The embedded hot-view server lives only as long as this process: warming it here would be wasted.
    warm = settings.redis_url is not None
    options = {"advisories": os.pathsep.join(str(p) for p in advisories)} if advisories else None
    show_progress = not as_json and sys.stderr.isatty()
    if show_progress:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(TextColumn("gather {task.description}"), BarColumn(), TimeElapsedColumn(),
                      console=console.real(), transient=True) as bar:
            task = bar.add_task("files", total=1)

            def step(name: str, done: int, total: int) -> None:
                bar.update(task, description=name, completed=done, total=total)

            context, path = service.gather_repo(settings, repo, progress=step, options=options, warm=warm)
    else:
        context, path = service.gather_repo(settings, repo, options=options, warm=warm)
    if as_json:  # a re-gather holds only what changed: print the stored snapshot whole
        whole = context if isinstance(context, RepoContext) else service.stored_context(settings, repo)
        sys.stdout.write(whole.model_dump_json(indent=2) + "\n")
        return
    meta = context.meta
    reused = sorted(name for name, run in meta.probes.items() if run.reused)
    say(f"gathered {meta.root} at {meta.commit or 'no commit'}{' (dirty)' if meta.dirty else ''}")
    say(f"  files: {len(context.files)}  denied: {len(context.denied)}  "
                  f"languages: {', '.join(list(context.languages)[:5]) or 'none'}")
    say(f"  probes: {len(meta.probes)} run, {len(reused)} reused{': ' + ', '.join(reused) if reused else ''}")
    if not isinstance(context, RepoContext):  # a Regathered (its module is imported only to re-gather)
        updated = ", ".join(context.incremental) or "none"
        say(f"  re-gathered: {len(context.changed)} changed file(s); updated from them alone: {updated}")
        if context.fell_back:
            fell = ", ".join(f"{name} ({why})" for name, why in sorted(context.fell_back.items()))
            say(f"  ran in full after a failed update: {fell}")
    say(f"  diagnostics: {len(context.diagnostics)}  stored: {path}")
    for diagnostic in context.diagnostics:  # a file left unread leaves its declarations out: say which
        if diagnostic.message.startswith("skipped: "):
            say(f"  {diagnostic.message}")


def say(line: str) -> None:
    # Plain lines: the summary holds paths (rich would read "[x]" in one as markup), and rich's import is
    # a sixth of a small repository's whole gather.
    sys.stdout.write(line + "\n")
