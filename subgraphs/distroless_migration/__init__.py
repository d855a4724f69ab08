"""Distroless migration: Dockerfiles → Chainguard images, with a shell-free final stage where the evidence allows.

Entry point: `migrate.migrate_dockerfile(path, text, options, read)` → `models.DockerfileMigration`
(new text, per-stage changes, package mapping, unmapped packages, the final-stage decision with
its evidence and blockers, `report_markdown()`). Options and the user mapping file: `options.py`.

Decisions (each module's docstring has the details):
- Images (`images.py`): language images keep major.minor; distro bases → wolfi-base when a shell is
  needed, else static; gcr.io/distroless → static / glibc-dynamic / python / node / jre; digests are
  dropped with a note; `--platform` is kept; a `${ARG}` FROM maps the ARG's default (stages that
  need a shell use `${ARG}-dev`).
- RUNs (`rewrite.py`): apt/yum/dnf/microdnf installs → `apk add --no-cache` in place; names with no
  known Wolfi package are left out of the apk line, named in a comment above the RUN and reported
  as unmapped (a Debian name never silently reaches apk); a `$VARIABLE` list is kept and reported.
- A stage that runs commands gets the -dev variant and `USER root` after FROM.
- The final stage (`runtime.py`, `artifacts.py`, `restructure.py`): shell-free when no blocker is
  found, restructured into a -dev builder plus a runtime stage when it has RUNs; otherwise it stays
  -dev and each blocker names file:line and the change that would remove it. When the Dockerfile
  sets a CMD but no ENTRYPOINT, `ENTRYPOINT []` clears the image's own (python, node, java…).
"""

from subgraphs.distroless_migration.graph import build_graph
from subgraphs.distroless_migration.recipes import RECIPES
from subgraphs.distroless_migration.work import ITEM_INPUTS, list_work, nothing_listed, split_work

__all__ = ["ITEM_INPUTS", "RECIPES", "build_graph", "list_work", "nothing_listed", "split_work"]
