"""Chainguard image facts come from the vendored catalog data (images.py), and refresh from an export."""

from __future__ import annotations

import json
from pathlib import Path

from subgraphs.distroless_migration import images


def test_facts_come_from_the_data() -> None:
    python, go, static = (images.variant(n, False) for n in ("python", "go", "static"))
    assert python is not None and not python.has("tzdata") and python.has("ca-certificates") and not python.shell
    assert go is not None and go.root  # go runs as root: no USER root is needed after its FROM
    assert static is not None and static.has("tzdata")
    assert images.everywhere() == {"ca-certificates-bundle", "wolfi-baselayout"}
    assert images.aliases()["mongo"] == "mongodb" and images.image("wolfi-base").dev is None  # type: ignore[union-attr]


def test_refresh_extracts_the_fields_the_migration_reads(tmp_path: Path) -> None:
    export = {"demo": {"image": "cgr.dev/chainguard/demo", "tier": "BASE", "aliases": ["demo:latest"],
                       "short_description": "left out", "variants": {"demo-public": {
                           "default": {"entrypoint": "/usr/bin/demo", "cmd": "", "run_as": 65532, "work_dir": "",
                                       "env": {"A": "b"}, "packages": ["b", "a"]},
                           "tags": ["latest"]}}}}
    source, target = tmp_path / "images.json", tmp_path / "out.json"
    source.write_text(json.dumps(export))
    try:
        assert images.refresh(source, target) == 1
    finally:
        images.catalog.cache_clear()
    written = json.loads(target.read_text())["demo"]
    assert "short_description" not in written and written["variants"]["demo-public"]["dev"] is None
    assert written["variants"]["demo-public"]["default"] == {"entrypoint": "/usr/bin/demo", "cmd": "",
                                                             "run_as": "65532", "work_dir": "", "packages": ["a", "b"]}
