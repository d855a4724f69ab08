"""Distroless migration: Dockerfiles → Chainguard images, with a shell-free final stage where the evidence allows.

Entry point: `migrate.migrate_dockerfile(path, text, options, read)` → `models.DockerfileMigration`
(new text, per-stage changes, package mapping, unmapped packages, blockers, the final-stage decision
with its evidence and reasons; `models.render` and `models.summary` make the report). Options and the user
mapping file: `models.py`. README.md maps each module to what it does.

Decisions (each module's docstring has the details):
- Images (`images.py`): language images keep major.minor; distro bases → wolfi-base when a shell is
  needed, else static (glibc-dynamic for a final stage unless it copies only static Go builds);
  gcr.io/distroless → static / glibc-dynamic / python / node / jre; other upstream images by the
  catalog data's aliases or the shipped mappings (`data/extra-images.yaml`, paid ones marked); anything
  else is "not in the known catalog" (map it with `--input mapping=FILE`). Digests (valid or not) are
  dropped with a note; `--platform` is kept. ARG-parameterised FROMs stay parameterised (`stages.py`).
  A third-party stage used only as a COPY --from source is left unchanged (`stages.py`).
- Image facts (`images.py`, `data/chainguard-images.json`): entrypoints, users and installed packages
  of the Chainguard images come from the public catalog data, never assumed.
- RUNs (`rewrite.py`, `shell.py`): apt/yum/dnf/microdnf
  installs (and the install_packages/clean-install helpers) → `apk add --no-cache` in place, Alpine names
  through the same table; the shell program keeps its structure (if/case/loops/subshells/chains).
  Nothing is dropped silently: an unmapped name stays in the apk line, and a
  command with no Wolfi form stays as written, each under a `# TODO(planner):` comment and reported
  as an `ItemBlocker`; the work item is blocked on them unless `keep_unconverted` is set (models.py).
- A stage that runs commands gets the -dev variant; `USER root` after FROM only where a RUN does more
  than read and the image does not already run as root (catalog data).
- Every stage's own CMD gets `ENTRYPOINT []` only when it starts with the program itself
  (`commands.py`, which documents the image conventions relied on).
- The final stage (`runtime.py`, `artifacts.py`, `commands.py`): shell-free when no
  reason against it is found, restructured into a -dev builder plus a runtime stage when it has RUNs
  (never without a CMD/ENTRYPOINT, nor when RUN outputs would be lost); otherwise it stays -dev and
  each reason names file:line and the change that would remove it.
- Before the item may succeed, the written file passes build checks (`verify.py`): apk names in the
  Wolfi index, `sh -n` on every changed RUN, no apt/yum/dnf left, FROMs on the registry; a failure is a
  `check-failed` blocker at file:line.
- The report (`models.py`) starts each Dockerfile with its path and a one-line summary.

This module is the task-class contract the engine reads (planner/run/taskmodule.py): `list_work` (one work item
per Dockerfile the gather parsed, with the deployment evidence that concerns it), `split_work` (without a
RepoContext: the Dockerfiles the bundle selected), `ITEM_INPUTS`, `RECIPES` (the recipe that migrates one
Dockerfile into a plan) and `build_graph`: the subgraph checks the plan's edit, sets the item's status and
writes its report. What the migration could not convert (`DockerfileMigration.blockers`) makes the item
`blocked`, one Blocker per problem (the supervisor then keeps its edits out of the patch), unless the user
passed keep_unconverted=true: then the item keeps its status (the commands stay as written under TODO
comments, nothing is dropped) and each one is listed in the item's notes. A build check the written file
fails (`DockerfileMigration.checks`, verify.py) blocks the item in every case: it would not build.
"""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from planner.bundle.model import Bundle
from planner.chain.recipes import Decline, Recipe, RepoFiles
from planner.chain.work import Blocker, ItemResult, WorkItem
from planner.errors import PlannerError
from planner.patch.plan import Edit, Plan
from planner.run.state import TaskState
from planner.run.taskbase import checked_result, plan_markdown, single_step_graph
from repocontext.lazyjson import plain
from repocontext.model import ShellEvidence
from repocontext.probes.containers import is_dockerfile
from subgraphs.distroless_migration import models
from subgraphs.distroless_migration.models import (
    DockerfileMigration,
    MappingError,
    MigrationOptions,
    UserMapping,
    load_mapping,
)


def dockerfiles(bundle: Bundle) -> list[str]:
    """Every Dockerfile the bundle selected, loaded or not (a truncated one is still named)."""
    named = {e.target for e in bundle.entries if e.kind == "file" and is_dockerfile(e.target)}
    for _, value in bundle.slice("containers"):
        records = value if isinstance(value, list) else (value or {}).get("dockerfiles", [])
        named.update(r["path"] for r in records if isinstance(r, dict) and "path" in r)
    return sorted(named)


ITEM_INPUTS = ("dockerfile",)  # each Dockerfile's bundle is scoped to it


def _item(path: str, evidence: list[dict[str, Any]] | None = None) -> WorkItem:
    data: dict[str, Any] = {"path": path}
    if evidence is not None:
        data["deployment_evidence"] = evidence
    return WorkItem(id=path, title=f"Migrate {path}", data=data, inputs={"dockerfile": path})


def concerns(manifest: str, dockerfile: str, evidence: Mapping[str, Any] | None = None) -> bool:
    """Compose evidence concerns only the Dockerfile its service builds (`build:` context and dockerfile),
    never another service's; a service that only names an image concerns none. Kubernetes evidence, which
    names no build, is taken to concern the Dockerfiles at or below the manifest's own directory."""
    if evidence is not None and str(evidence.get("detail", "")).startswith("service "):
        return evidence.get("dockerfile") == dockerfile
    folder = posixpath.dirname(manifest)
    return not folder or dockerfile.startswith(folder + "/")


def list_work(context: Mapping[str, Any], inputs: Mapping[str, str]) -> list[WorkItem]:
    """One item per Dockerfile the gather parsed (narrowed by the dockerfile input). Each carries the
    deployment evidence (compose/Kubernetes command overrides) that concerns it, whole, from the RepoContext."""
    containers = context.get("containers") or {}
    paths = sorted({str(d["path"]) for d in containers.get("dockerfiles", [])})
    evidence = [plain(e) for e in containers.get("shell_evidence", [])
                if str(e.get("kind", "")).startswith("deployment-")]
    wanted = inputs.get("dockerfile")
    return [_item(path, [e for e in evidence if concerns(e["file"], path, e)]) for path in paths
            if not wanted or path == wanted.removeprefix("./")]


def nothing_listed(context: Mapping[str, Any], inputs: Mapping[str, str]) -> str:
    if inputs.get("dockerfile"):
        return f"the RepoContext has no Dockerfile {inputs['dockerfile']}"
    return "the gather found no Dockerfile (Dockerfile, *.Dockerfile, Dockerfile.*, Containerfile)"


def split_work(bundle: Bundle, inputs: dict[str, str]) -> list[WorkItem]:
    """Without a RepoContext (bootstrap): the Dockerfiles the bundle selected."""
    return [_item(path) for path in dockerfiles(bundle)]


_TRUE, _FALSE = frozenset({"true", "yes", "1", "on"}), frozenset({"false", "no", "0", "off", ""})


MAPPING_FILE = "distroless-mapping.yaml"  # a fleet-wide mapping kept beside the user's task classes


def task_class_mapping(env: Mapping[str, str] | None = None) -> Path | None:
    """The first `distroless-mapping.yaml` in a PLANNER_TASK_CLASS_PATH directory, if any."""
    value = (os.environ if env is None else env).get("PLANNER_TASK_CLASS_PATH") or ""
    found = (Path(d).expanduser() / MAPPING_FILE for d in value.split(os.pathsep) if d)
    return next((p for p in found if p.is_file()), None)


def options_from(inputs: dict[str, str]) -> MigrationOptions:
    """--input registry=… org=… mapping=FILE (a user mapping file, YAML) keep_unconverted=true|false.
    Without mapping=, a distroless-mapping.yaml on the task-class path is the user mapping."""
    mapping = UserMapping()
    source = Path(inputs["mapping"]).expanduser() if inputs.get("mapping") else task_class_mapping()
    if source is not None:
        try:
            mapping = load_mapping(source)
        except MappingError as exc:
            raise PlannerError(str(exc)) from None
    keep = (inputs.get("keep_unconverted") or "").strip().lower()
    if keep not in _TRUE | _FALSE:
        raise PlannerError(f"--input keep_unconverted={inputs['keep_unconverted']!r}: expected true or false")
    return MigrationOptions(registry=inputs.get("registry") or "cgr.dev", org=inputs.get("org") or "chainguard",
                            mapping=mapping, keep_unconverted=keep in _TRUE)


def deployment_evidence(bundle: Bundle) -> list[dict[str, Any]]:
    evidence: list[dict[str, Any]] = []
    for _, value in bundle.slice("containers"):
        records = value if isinstance(value, list) else (value or {}).get("shell_evidence", [])
        evidence += [r for r in records if isinstance(r, dict) and str(r.get("kind", "")).startswith("deployment-")]
    return evidence


_DONE: dict[str, DockerfileMigration] = {}


def _migrate(bundle: Bundle, item: WorkItem, files: RepoFiles) -> DockerfileMigration:
    """Migrate the whole Dockerfile (the bundle's copy may be cut; that only limits what an LLM sees)."""
    path = item.data["path"]
    text = files(path)
    assert text is not None  # match() declined an unreadable file
    records = item.data["deployment_evidence"] if "deployment_evidence" in item.data else [
        e for e in deployment_evidence(bundle) if concerns(str(e.get("file", "")), path, e)]
    evidence = [ShellEvidence.model_validate(e) for e in records]
    listed = sorted({*bundle.files, path})
    # match() and apply() both migrate the item: the second call reuses the first's result (same inputs)
    key = json.dumps([path, text, sorted(bundle.inputs.items()), records, listed], sort_keys=True, default=str)
    done = _DONE.get(key)
    if done is None:
        # imported on first use: importing the package (the engine, `python -m …wolfi`) loads no migration code
        from subgraphs.distroless_migration.migrate import migrate_dockerfile

        done = migrate_dockerfile(path, text, options_from(bundle.inputs), files, files=listed,
                                  deployment_evidence=evidence)
        _DONE.clear()  # items come one after another: keep only the last (a local keeps threads safe)
        _DONE[key] = done
    return done.model_copy(deep=True)


class ChainguardMigration(Recipe):
    """Map base images and OS packages to Chainguard/Wolfi and go shell-free where the evidence allows;
    declines (for the LLM) a Dockerfile whose base image it cannot map or that does not parse."""

    name = "chainguard-migration"
    version = "1"
    task_class = "distroless-migration"

    def match(self, bundle: Bundle, item: WorkItem, files: RepoFiles) -> Decline | None:
        path = item.data["path"]
        if files(path) is None:
            return Decline(reason=f"{path} cannot be read", file=path)
        migration = _migrate(bundle, item, files)
        stages = [s for s in migration.stages if any(n.startswith("not migrated:") for n in s.notes)]
        declined = [n for s in stages for n in s.notes if n.startswith("not migrated:")]
        problems = [n for n in migration.notes if "parse" in n.lower()]
        if declined or problems:
            # Points at the first FROM it could not map; the reason names every one.
            return Decline(reason="; ".join(declined + problems), file=path, line=stages[0].line if stages else None)
        return None

    def apply(self, bundle: Bundle, item: WorkItem, files: RepoFiles) -> Plan:
        path = item.data["path"]
        migration = _migrate(bundle, item, files)
        edits = [Edit(file=path, old=files(path) or "", new=migration.new_text, reason="Chainguard migration")] \
            if migration.changed else []
        summary = models.summary(migration)
        return Plan(summary=f"{path}: {summary['line']}",
                    steps=[f"stage {s.index}: {s.old_image} → {s.new_image}" for s in migration.stages],
                    edits=edits, notes=list(migration.notes),
                    used_entries=sorted(e.id for e in bundle.entries
                                        if e.target == path or e.target.startswith("containers")),
                    data={"migration": migration.model_dump(), "summary": summary})


RECIPES: list[Recipe] = [ChainguardMigration()]


def _settle(result: ItemResult, migration: DockerfileMigration) -> None:
    found = [Blocker(kind=b.kind, file=b.file, line=b.line, message=b.message, fix=b.fix) for b in migration.blockers]
    failed = [Blocker(kind=b.kind, file=b.file, line=b.line, message=b.message, fix=b.fix) for b in migration.checks]
    if migration.blocked:
        result.status = "blocked"
        result.blockers = failed + (found if not migration.keep_unconverted else [])
        if migration.keep_unconverted:
            result.notes += [f"kept unconverted ({b.kind}) at {b.where}: {b.message}; fix: {b.fix}" for b in found]
    else:
        result.notes += [f"kept unconverted ({b.kind}) at {b.where}: {b.message}; fix: {b.fix}" for b in found]
        if found:  # the build checks skip the RUNs under those TODOs: say what that means
            result.notes.append("keep_unconverted=true: the Dockerfile does not build as written until each "
                                "TODO(planner) above is resolved")


def execute(state: TaskState) -> dict[str, Any]:
    result, plan = checked_result(state)
    if plan is not None and result.status != "failed":
        raw = (plan.data or {}).get("migration")
        if raw:
            migration = DockerfileMigration.model_validate(raw)
            _settle(result, migration)
            result.report = models.render(migration, result.status)
            if result.status == "no_changes":
                result.report += "\nAlready on Chainguard images: nothing to change.\n"
        else:
            result.report = plan_markdown(result.item, plan)
    return {"results": [result.model_dump()]}


def build_graph() -> Any:
    return single_step_graph(execute)


__all__ = ["ITEM_INPUTS", "RECIPES", "build_graph", "list_work", "nothing_listed", "split_work"]
