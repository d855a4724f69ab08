"""A flow's `regenerate` side-effect: bring the lockfiles in line with the plan's manifest edits.

Which lockfiles: the ones beside each edited manifest, or in the nearest folder above that has one (a
workspace root) — package.json → package-lock.json, npm-shrinkwrap.json, yarn.lock, pnpm-lock.yaml;
pyproject.toml → uv.lock, poetry.lock; Pipfile → Pipfile.lock — and, for an edited `*.in`, the
compiled `.txt` beside it whose header records its pip-compile / `uv pip compile` command.

The commands come from this tool (the lockfile's format, the compiled file's header), never from the
plan, and run through the remediation chain's own machinery (subgraphs/vulnerability_remediation/
regenerate.py): one throwaway copy of the repository with the plan applied, the user's tree never
touched. Each lockfile the tool rewrote replaces the plan's edits of it with one whole-file edit; a
command that cannot run (tool missing, index unreachable, failure, timeout) leaves a `regenerate`
blocker naming the command a person would run.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from pathlib import Path
from typing import Any

from planner.patch.plan import Plan
from planner.run.taskbase import reader
from repocontext.deps.compiled import compile_header, compiled_sources, recompile
from subgraphs.vulnerability_remediation.lockfiles import nearest_locks, relock_command
from subgraphs.vulnerability_remediation.model import LockfileAction
from subgraphs.vulnerability_remediation.regenerate import log_note, not_run, run_actions, with_regenerated

Read = Callable[[str], str | None]
WHY = "{manifest} was edited, and {lock} records hashes or resolved versions only its tool can compute"


def _compiled(manifest: str, read: Read) -> LockfileAction | None:
    """The compiled requirements file beside an edited `.in` file, when its header says the `.in` made it."""
    if not manifest.endswith(".in"):
        return None
    output = manifest[: -len(".in")] + ".txt"
    text = read(output)
    header = compile_header(text) if text else None
    if header is None or (header.tool != "custom" and posixpath.basename(manifest) not in
                          {posixpath.basename(s) for s in compiled_sources(header.command)}):
        return None
    cwd, command = recompile(header, output)
    return LockfileAction(file=output, cwd=cwd, command=command, why=WHY.format(manifest=manifest, lock=output))


def actions_for(plan: Plan, read: Read) -> list[LockfileAction]:
    """One action per lockfile the plan's manifest edits make stale, in path order."""
    found: dict[str, LockfileAction] = {}
    for manifest in sorted({e.file for e in plan.edits}):
        for lock in nearest_locks(manifest, lambda p: read(p) is not None):
            found.setdefault(lock, LockfileAction(
                file=lock, cwd=posixpath.dirname(lock) or ".", command=relock_command(lock, read(lock) or ""),
                why=WHY.format(manifest=manifest, lock=lock)))
        compiled = _compiled(manifest, read)
        if compiled is not None:
            found.setdefault(compiled.file, compiled)
    return [found[path] for path in sorted(found)]


def regenerate(repo: Path, plan: Plan, item: dict[str, Any], timeout: float, execute: bool = True) -> dict[str, Any]:
    """The side-effect's outcome; under `plan`, the plan with the regenerated files, when any changed.
    `item` is the work item's data: one that names ecosystem, package and target is also checked for a
    lockfile that still locks the package below the target."""
    read = reader(str(repo))
    actions = actions_for(plan, read)
    if not actions:
        return {"ran": False, "ok": True, "failed": False, "files": [], "blockers": [],
                "reason": "no lockfile beside the edited manifests"}
    if not execute:
        work = not_run(actions, "pass --regenerate to run it (sandboxed in a throwaway copy, registry network only)")
        blockers = [b.model_dump() for b in work.blockers]
        return {"ran": False, "ok": False, "failed": False, "files": [], "blockers": blockers, "log": work.log,
                "reason": "not run: --regenerate was not given"}
    work = run_actions(repo, plan, actions, item, timeout)
    blockers = [b.model_dump() for b in work.blockers]
    outcome: dict[str, Any] = {
        "ran": True, "ok": not blockers, "failed": bool(blockers), "files": sorted(work.texts),
        "blockers": blockers, "log": work.log, "error": "; ".join(f"{b['file']}: {b['message']}" for b in blockers)}
    rows = plan.data.get("regeneration")
    earlier = {log_note(row) for row in rows} if isinstance(rows, list) else set()  # a loop regenerates again
    notes = [n for n in plan.notes if n not in earlier] + [log_note(row) for row in work.log]
    outcome["plan"] = plan.model_copy(update={
        "edits": with_regenerated(plan, work, read), "notes": notes,
        "data": {**plan.data, "regeneration": work.log}}).model_dump()
    return outcome
