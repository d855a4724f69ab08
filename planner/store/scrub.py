"""Secret values out of what is stored: the checkpointer's serializer.

A run works on exact text in memory (a recipe reads the real files; the patch must apply), but what it
persists or shows holds `REDACTED-<rule>` markers instead of secret values: checkpoints, run artifacts, the
solved-example store, CLI output and the UI (which reads those). Edits with markers are applied exactly by
`planner.patch.unredact`, so a run resumed from a redacted checkpoint still makes the exact patch.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from repocontext.secrets import redact_tree


class RedactingSerializer(JsonPlusSerializer):
    """The checkpointer's serializer, writing every state with its secret values redacted."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return super().dumps_typed(redact_tree(obj))
