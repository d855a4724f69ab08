"""Distroless migration: Dockerfiles → Chainguard images, with a shell-free final stage where the evidence allows.

Entry point: `migrate.migrate_dockerfile(path, text, options, read)` → `models.DockerfileMigration`
(new text, per-stage changes, package mapping, unmapped packages, blockers, the final-stage decision
with its evidence and reasons, `summary()`, `report_markdown()`). Options and the user mapping file: `options.py`.

Decisions (each module's docstring has the details):
- Images (`images.py`): language images keep major.minor; distro bases → wolfi-base when a shell is
  needed, else static (glibc-dynamic for a final stage unless it copies only static Go builds);
  gcr.io/distroless → static / glibc-dynamic / python / node / jre; digests (valid or not) are
  dropped with a note; `--platform` is kept. ARG-parameterised FROMs stay parameterised (`froms.py`).
- RUNs (`rewrite.py`, `unconverted.py`, `mounts.py`): apt/yum/dnf/microdnf installs → `apk add
  --no-cache` in place. Nothing is dropped silently: an unmapped name stays in the apk line, and a
  command with no Wolfi form stays as written, each under a `# TODO(planner):` comment and reported
  as an `ItemBlocker`; the work item is blocked on them unless `keep_unconverted` is set (options.py).
- A stage that runs commands gets the -dev variant and `USER root` after FROM.
- Every stage's own CMD gets `ENTRYPOINT []` only when it starts with the program itself
  (`entrypoints.py`, which documents the image conventions relied on).
- The final stage (`runtime.py`, `artifacts.py`, `outputs.py`, `restructure.py`): shell-free when no
  reason against it is found, restructured into a -dev builder plus a runtime stage when it has RUNs
  (never without a CMD/ENTRYPOINT, nor when RUN outputs would be lost); otherwise it stays -dev and
  each reason names file:line and the change that would remove it.
- The report (`report.py`) starts each Dockerfile with its path and a one-line summary.
"""

from subgraphs.distroless_migration.graph import build_graph
from subgraphs.distroless_migration.recipes import RECIPES
from subgraphs.distroless_migration.work import ITEM_INPUTS, list_work, nothing_listed, split_work

__all__ = ["ITEM_INPUTS", "RECIPES", "build_graph", "list_work", "nothing_listed", "split_work"]
