"""The recipe: rewrite one Dockerfile for Chainguard images with the migration library."""

from __future__ import annotations

from planner.bundle.model import Bundle
from planner.chain.recipes import Recipe
from planner.chain.work import WorkItem
from planner.plan import Edit, Plan
from repocontext.model import ShellEvidence
from subgraphs.distroless_migration.migrate import migrate_dockerfile
from subgraphs.distroless_migration.models import DockerfileMigration
from subgraphs.distroless_migration.work import deployment_evidence, options_from


def _text(bundle: Bundle, path: str) -> str:
    """The Dockerfile's text: the one place the recipe reads it (the planner may supply the whole file)."""
    return bundle.files[path]


def _migrate(bundle: Bundle, path: str) -> DockerfileMigration:
    evidence = [ShellEvidence.model_validate(e) for e in deployment_evidence(bundle)]
    return migrate_dockerfile(path, _text(bundle, path), options_from(bundle.inputs), bundle.files.get,
                              files=sorted(bundle.files), deployment_evidence=evidence)


class ChainguardMigration(Recipe):
    """Map base images and OS packages to Chainguard/Wolfi and go shell-free where the evidence allows;
    declines (for the LLM) a Dockerfile whose base image it cannot map or that does not parse."""

    name = "chainguard-migration"
    version = "1"
    task_class = "distroless-migration"

    def match(self, bundle: Bundle, item: WorkItem) -> str | None:
        path = item.data["path"]
        entry = next((e for e in bundle.entries if e.kind == "file" and e.target == path and e.status in
                      ("included", "requested")), None)
        if entry is None or path not in bundle.files:
            return f"{path} is not loaded whole in the bundle"
        migration = _migrate(bundle, path)
        declined = [n for s in migration.stages for n in s.notes if n.startswith("not migrated:")]
        problems = [n for n in migration.notes if "parse" in n.lower()]
        if declined or problems:
            return "; ".join(declined + problems)
        return None

    def apply(self, bundle: Bundle, item: WorkItem) -> Plan:
        path = item.data["path"]
        migration = _migrate(bundle, path)
        edits = [Edit(file=path, old=_text(bundle, path), new=migration.new_text, reason="Chainguard migration")] \
            if migration.changed else []
        summary = migration.summary()
        return Plan(summary=f"{path}: {summary['line']}",
                    steps=[f"stage {s.index}: {s.old_image} → {s.new_image}" for s in migration.stages],
                    edits=edits, notes=list(migration.notes),
                    used_entries=sorted(e.id for e in bundle.entries
                                        if e.target == path or e.target.startswith("containers")),
                    data={"migration": migration.model_dump(), "summary": summary})


RECIPES: list[Recipe] = [ChainguardMigration()]
