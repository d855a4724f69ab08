"""The recipe: rewrite one Dockerfile for Chainguard images with the migration library."""

from __future__ import annotations

import json

from planner.bundle.model import Bundle
from planner.chain.recipes import Decline, Recipe, RepoFiles
from planner.chain.work import WorkItem
from planner.patch.plan import Edit, Plan
from repocontext.model import ShellEvidence
from subgraphs.distroless_migration import report
from subgraphs.distroless_migration.migrate import migrate_dockerfile
from subgraphs.distroless_migration.models import DockerfileMigration
from subgraphs.distroless_migration.work import concerns, deployment_evidence, options_from

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
        summary = report.summary(migration)
        return Plan(summary=f"{path}: {summary['line']}",
                    steps=[f"stage {s.index}: {s.old_image} → {s.new_image}" for s in migration.stages],
                    edits=edits, notes=list(migration.notes),
                    used_entries=sorted(e.id for e in bundle.entries
                                        if e.target == path or e.target.startswith("containers")),
                    data={"migration": migration.model_dump(), "summary": summary})


RECIPES: list[Recipe] = [ChainguardMigration()]
