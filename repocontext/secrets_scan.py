"""Content scanning of the file index: files holding secret-looking values are denied.

Content-addressed and therefore incremental: a file whose blob id is unchanged
since the previous snapshot was already scanned clean, so only new or changed
files are read. Nothing of a flagged file is kept but its path and the rule.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from repocontext.model import Denied, FileRecord
from repocontext.secrets import content_rule_of_bytes

SCAN_LIMIT = 2_000_000  # larger files are not scanned (nor loaded into bundles whole)


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


def scan(root: Path, files: Sequence[FileRecord], previous: Mapping[str, str]) -> tuple[list[FileRecord], list[Denied]]:
    """Split `files` into the clean ones and the denied ones.

    `previous` maps path → blob id of files the last snapshot kept (scanned clean). Content is read
    once per blob id: copies share the verdict of the first one read.
    """
    top = str(root)
    verdicts: dict[str, str | None] = {}  # blob id → rule, for blobs read
    kept: list[FileRecord] = []
    denied: list[Denied] = []
    for record in files:
        if previous.get(record.path) == record.sha:
            rule = None
        elif record.sha in verdicts:
            rule = verdicts[record.sha]
        else:
            read, rule = _flagged(top, record)
            if read:
                verdicts[record.sha] = rule
        if rule:
            denied.append(Denied(path=record.path, rule=rule))
        else:
            kept.append(record)
    return kept, denied
