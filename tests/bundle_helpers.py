"""Helpers for bundle tests: a TCCM from text, a gathered repo, a built bundle."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

from planner import tokens
from planner.bundle import render
from planner.bundle.builder import build
from planner.bundle.model import Bundle
from planner.bundle.view import open_view
from planner.tccm.model import TCCM
from planner.tccm.registry import Registry
from repocontext.gather import gather
from repocontext.store import RepoContextStore


def tccm_from(tmp_path: Path, body: str, name: str = "t") -> TCCM:
    directory = tmp_path / "tccm-dir"
    directory.mkdir(exist_ok=True)
    text = f"task_class: {name}\nversion: 1\ndescription: test class\n" + textwrap.dedent(body).lstrip()
    (directory / f"{name}.yaml").write_text(text)
    return Registry([directory]).get(name)


def make_bundle(repo: Path, home: Path, tccm: TCCM, inputs: Mapping[str, str] | None = None,
                gathered: bool = True) -> Bundle:
    store = RepoContextStore(home)
    if gathered:
        store.save(gather(repo))
    return build(tccm, open_view(repo, store), dict(inputs or {}))


def header_tokens(name: str = "t", mode: str = "repocontext", inputs: Mapping[str, str] | None = None) -> int:
    return tokens.count(render.bundle_header(name, "1", mode, dict(inputs or {})))


def block_tokens(item_id: str, body: str) -> int:
    return tokens.count(render.block(item_id, body))


def budget(max_tokens: int, per_file: int, max_files: int = 50) -> str:
    return f"budget: {{max_files: {max_files}, max_tokens: {max_tokens}, per_file_max_tokens: {per_file}}}\n"
