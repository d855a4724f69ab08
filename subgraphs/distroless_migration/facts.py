"""Two questions migrate.py asks about a stage, answered from the parsed file and the catalog data.

- `present_in`: does the image a final stage ends on already have a package (so an install of it can go)?
  Asked of every variant it may end on (default and -dev; for a distro base, static when its only RUN goes,
  else wolfi-base), per the catalog data; for an image the data lacks, only what every image has.
- `needs_root`: does a stage's RUN (as rewritten) do anything but read (echo, test, ls, …)? Only then does
  a -dev image that runs as nonroot get `USER root` after its FROM: apk, account changes and writes to
  directories Docker created as root fail otherwise, and telling those apart reliably is not possible here.
- `copy_source`: is a stage only a `COPY --from` source (nothing built FROM it, not in the final image's
  chain)? Such a stage on a third-party image is left unchanged while the rest of the file migrates: the
  files copied from it are the same whatever the other stages run on.
"""

from __future__ import annotations

from collections.abc import Callable

from repocontext.model import Instruction, Stage
from subgraphs.distroless_migration.artifacts import command_index_of, run_commands
from subgraphs.distroless_migration.catalog import variant
from subgraphs.distroless_migration.images import ImageChoice, Unmapped
from subgraphs.distroless_migration.packages import PROVIDED_EVERYWHERE


def present_in(choice: ImageChoice | Unmapped | None, only_run: bool) -> Callable[[str], bool]:
    names = ((["static"] if only_run else ["wolfi-base"]) if choice.kind == "distro" else [choice.name]) \
        if isinstance(choice, ImageChoice) else []
    found = [v for n in names for v in (variant(n, False), variant(n, True))]
    if not found or None in found:
        return lambda name: name in PROVIDED_EVERYWHERE
    return lambda name: all(v is not None and v.has(name) for v in found)


def copy_source(stages: list[Stage], final_indexes: set[int], stage: Stage) -> bool:
    if stage.index in final_indexes or any(s.base.stage_index == stage.index for s in stages):
        return False
    names = {str(stage.index)} | ({stage.name.lower()} if stage.name else set())
    return any(i.keyword == "COPY" and f.name == "from" and (f.value or "").lower() in names
               for s in stages for i in s.instructions for f in i.flags)


def needs_root(stage: Stage, rewritten: dict[int, Instruction], kept: set[int]) -> bool:
    """`kept`: lines of the RUNs still run after rewriting (a dropped RUN needs nothing)."""
    from subgraphs.distroless_migration.outputs import SILENT  # outputs imports this package's artifacts

    for ins in stage.instructions:
        if ins.keyword != "RUN" or ins.line not in kept:
            continue
        for argv in run_commands(rewritten.get(ins.line, ins)):
            k = command_index_of(argv)
            if k is not None and argv[k].rsplit("/", 1)[-1] not in SILENT:
                return True
    return False
