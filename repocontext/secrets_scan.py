"""Content scanning of the file index: files holding secret-looking values are denied.

Content-addressed and therefore incremental: a file whose blob id is unchanged
since the previous snapshot was already scanned clean, so only new or changed
files are read. Nothing of a flagged file is kept but its path and the rule.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from repocontext import parallel
from repocontext.model import Denied, FileRecord
from repocontext.secrets import content_rule_of_bytes

SCAN_LIMIT = 2_000_000  # larger files are not scanned (nor loaded into bundles whole)
# Measured since the needles are found in one pass (Aho-Corasick), in one process, page cache warm: a Django
# site's 1,048 files (15.5 MB) in 23 ms, 8,384 (124 MB) in 175 ms, a JS package's 92 files (2.2 MB, four
# bundles dense with needles) in 14 ms: opening and reading each file is most of it. Only the largest trees
# are worth a fork pool (which costs 7-17 ms here) now.
SECONDS_PER_FILE = 2.2e-5
SECONDS_PER_BYTE = 5e-10


def _flagged(root: str, record: FileRecord) -> tuple[bool, str | None]:
    """(whether the content was read, the content rule it trips)."""
    if record.size > SCAN_LIMIT:
        return False, None
    try:
        with open(os.path.join(root, record.path), "rb") as handle:
            data = handle.read()
    except OSError:
        return False, None
    if b"\0" in data[:8192]:
        return True, None
    return True, content_rule_of_bytes(data, record.path)


def scan(root: Path, files: Sequence[FileRecord], previous: Mapping[str, str],
         workers: int = 1) -> tuple[list[FileRecord], list[Denied]]:
    """Split `files` into the clean ones and the denied ones.

    `previous` maps path → blob id of files the last snapshot kept (scanned clean). Content is read
    once per blob id: copies share the verdict of the first one read. Many files to read are read by
    `workers` processes (repocontext.parallel); the outcome never depends on it.
    """
    top = str(root)
    todo: dict[str, FileRecord] = {}  # blob id → the first record to read for it
    for record in files:
        if previous.get(record.path) != record.sha and record.sha not in todo:
            todo[record.sha] = record
    batch = list(todo.values())
    costs = [SECONDS_PER_FILE + min(record.size, SCAN_LIMIT) * SECONDS_PER_BYTE for record in batch]
    found = parallel.map_ordered(lambda record: _flagged(top, record), batch, workers, costs)
    verdicts = {sha: rule for sha, (read, rule) in zip(todo, found, strict=True) if read}  # blob id → rule
    kept: list[FileRecord] = []
    denied: list[Denied] = []
    for record in files:
        rule = None if previous.get(record.path) == record.sha else verdicts.get(record.sha)
        if rule:
            denied.append(Denied(path=record.path, rule=rule))
        else:
            kept.append(record)
    return kept, denied
