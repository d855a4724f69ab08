"""Maintain the Wolfi data: refresh the vendored index, check the mapping table against it.

    python -m subgraphs.distroless_migration.wolfi_data refresh PATH   # rewrite data/wolfi-packages.tsv
    python -m subgraphs.distroless_migration.wolfi_data check [PATH]   # table vs index (and index vs PATH)

PATH is a full export of the wolfi-dev/os recipes (columns name, origin, version, provides,
description), such as /work/shared/wolfi/packages.tsv. `check` prints one line per problem and
exits 1 when there is any: a mapped Wolfi name the index lacks, a name both mapped and unmapped,
an Alpine name listed as unmapped that Wolfi has, and (with PATH) any difference between the
vendored index and the export. Kept apart from `wolfi_index` so that running it as a module does
not load that module twice (the package imports it).
"""

from __future__ import annotations

import sys
from pathlib import Path

from subgraphs.distroless_migration.wolfi_index import INDEX_PATH, diff, read, refresh, vendored
from subgraphs.distroless_migration.wolfi_map import problems

USAGE = "usage: python -m subgraphs.distroless_migration.wolfi_data (refresh PATH | check [PATH])"


def _valid(argv: list[str]) -> bool:
    if not argv or argv[0] not in ("refresh", "check"):
        return False
    return len(argv) == 2 if argv[0] == "refresh" else len(argv) <= 2


def main(argv: list[str]) -> int:
    if not _valid(argv):
        print(USAGE, file=sys.stderr)
        return 2
    if argv[0] == "refresh":
        index = refresh(Path(argv[1]))
        print(f"{INDEX_PATH}: {len(index.packages)} packages")
    found = diff(vendored(), read(Path(argv[1]))) if len(argv) == 2 else []
    found += problems(vendored())
    for line in found:
        print(line)
    print(f"{len(found)} problem(s)" if found else "mapping and index agree")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
