"""Distroless migration: Dockerfiles → Chainguard images, with a shell-free final stage where the evidence allows.

Entry point: `migrate.migrate_dockerfile(path, text, options, read)` → `models.DockerfileMigration`
(new text, per-stage changes, package mapping, unmapped packages, blockers, the final-stage decision
with its evidence and reasons; `report.py` renders and summarises it). Options and the user mapping file: `options.py`.

Decisions (each module's docstring has the details):
- Images (`images.py`): language images keep major.minor; distro bases → wolfi-base when a shell is
  needed, else static (glibc-dynamic for a final stage unless it copies only static Go builds);
  gcr.io/distroless → static / glibc-dynamic / python / node / jre; other upstream images by the
  catalog data's aliases or the shipped mappings (`data/extra-images.yaml`, paid ones marked); anything
  else is "not in the known catalog" (map it with `--input mapping=FILE`). Digests (valid or not) are
  dropped with a note; `--platform` is kept. ARG-parameterised FROMs stay parameterised (`froms.py`).
  A third-party stage used only as a COPY --from source is left unchanged (`facts.py`).
- Image facts (`catalog.py`, `data/chainguard-images.json`): entrypoints, users and installed packages
  of the Chainguard images come from the public catalog data, never assumed.
- RUNs (`rewrite.py`, `unconverted.py`, `mounts.py`, `alpine.py`, `dropping.py`): apt/yum/dnf/microdnf
  installs (and the install_packages/clean-install helpers) → `apk add --no-cache` in place, Alpine names
  through the same table; the shell program keeps its structure (if/case/loops/subshells/chains).
  Nothing is dropped silently: an unmapped name stays in the apk line, and a
  command with no Wolfi form stays as written, each under a `# TODO(planner):` comment and reported
  as an `ItemBlocker`; the work item is blocked on them unless `keep_unconverted` is set (options.py).
- A stage that runs commands gets the -dev variant; `USER root` after FROM only where a RUN does more
  than read and the image does not already run as root (catalog data).
- Every stage's own CMD gets `ENTRYPOINT []` only when it starts with the program itself
  (`entrypoints.py`, which documents the image conventions relied on).
- The final stage (`runtime.py`, `artifacts.py`, `outputs.py`, `restructure.py`): shell-free when no
  reason against it is found, restructured into a -dev builder plus a runtime stage when it has RUNs
  (never without a CMD/ENTRYPOINT, nor when RUN outputs would be lost); otherwise it stays -dev and
  each reason names file:line and the change that would remove it.
- Before the item may succeed, the written file passes build checks (`verify.py`): apk names in the
  Wolfi index, `sh -n` on every changed RUN, no apt/yum/dnf left, FROMs on the registry; a failure is a
  `check-failed` blocker at file:line.
- The report (`report.py`) starts each Dockerfile with its path and a one-line summary.
"""

from subgraphs.distroless_migration.graph import build_graph
from subgraphs.distroless_migration.recipes import RECIPES
from subgraphs.distroless_migration.work import ITEM_INPUTS, list_work, nothing_listed, split_work

__all__ = ["ITEM_INPUTS", "RECIPES", "build_graph", "list_work", "nothing_listed", "split_work"]
