"""Task inputs given as NAME=VALUE pairs: one parser for the CLI's `--input` and the UI's preview form."""

from __future__ import annotations

from collections.abc import Iterable


def parse_pairs(pairs: Iterable[str], label: str = "input") -> dict[str, str]:
    """NAME=VALUE pairs as a mapping; a ValueError names the pair (as `label`) that is not one, or a repeat."""
    inputs: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip()
        if not sep or not name or not name.replace("_", "a").isalnum():
            raise ValueError(f"{label} {pair.strip()!r}: expected NAME=VALUE")
        if name in inputs:
            raise ValueError(f"{label} {name!r} given twice")
        inputs[name] = value.strip()
    return inputs
