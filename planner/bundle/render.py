"""Deterministic rendering of bundle items: same inputs, same bytes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

try:
    from yaml import CSafeDumper as _Dumper
except ImportError:  # pragma: no cover
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]

TRUNCATION_MARK = "[… truncated to per_file_max_tokens]\n"


def render_value(value: Any) -> str:
    """A RepoContext slice as YAML: compact for tokens, sorted for determinism."""
    return yaml.dump(value, Dumper=_Dumper, sort_keys=True, default_flow_style=False,
                     allow_unicode=True, width=4096)


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
