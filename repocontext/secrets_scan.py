"""Content scanning of the file index: files holding secret-looking values are denied.

Content-addressed and therefore incremental: a file whose blob id is unchanged
since the previous snapshot was already scanned clean, so only new or changed
files are read. Nothing of a flagged file is kept but its path and the rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from repocontext.model import Denied, FileRecord
from repocontext.secrets import content_rule

SCAN_LIMIT = 2_000_000  # larger files are not scanned (nor loaded into bundles whole)


def _flagged(root: Path, record: FileRecord) -> str | None:
    if record.size > SCAN_LIMIT:
        return None
    try:
        data = (root / record.path).read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return content_rule(data.decode("utf-8", errors="replace"))


def scan(root: Path, files: Sequence[FileRecord], previous: Mapping[str, str]) -> tuple[list[FileRecord], list[Denied]]:
    """Split `files` into the clean ones and the denied ones.

    `previous` maps path → blob id of files the last snapshot kept (scanned clean).
    """
    kept: list[FileRecord] = []
    denied: list[Denied] = []
    for record in files:
        if previous.get(record.path) == record.sha:
            kept.append(record)
            continue
        rule = _flagged(root, record)
        if rule:
            denied.append(Denied(path=record.path, rule=rule))
        else:
            kept.append(record)
    return kept, denied
