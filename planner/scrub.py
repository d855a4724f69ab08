"""Secret values out of what is stored: redaction of whole values (state, records) and the checkpointer's serializer.

A run works on exact text in memory (a recipe reads the real files; the patch must apply), but what it
persists or shows holds `REDACTED-<rule>` markers instead of secret values: checkpoints, run artifacts, the
solved-example store, CLI output and the UI (which reads those). Edits with markers are applied exactly by
`planner.unredact`, so a run resumed from a redacted checkpoint still makes the exact patch.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from repocontext.secrets import redact


def scrub(value: Any) -> Any:
    """`value` with every string in it (dict keys and values, list and tuple items) redacted; other objects
    are kept as they are. Unchanged containers are returned as they were (no copy)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        pairs = [(scrub(k), scrub(v)) for k, v in value.items()]
        same = all(a is k and b is v for (a, b), (k, v) in zip(pairs, value.items(), strict=True))
        return value if same else dict(pairs)
    if isinstance(value, list | tuple):
        items = [scrub(v) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        if isinstance(value, list):
            return items
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)  # a named tuple stays one
    return value


class RedactingSerializer(JsonPlusSerializer):
    """The checkpointer's serializer, writing every state with its secret values redacted."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return super().dumps_typed(scrub(obj))
