"""What the bundle builder needs from hot views, with no dependency on Redis."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class HotSlice:
    """One pre-rendered slice: exactly what `keys.resolve` + `render.render_value` would give."""

    key: str  # the resolved key as the builder shows it ("dependencies.requests", "vulnerabilities.*")
    notes: list[str]  # widening notes, as keys.resolve records them
    body: str  # render.render_value(value)
    value: Any  # the slice itself (JSON)
    tokens: dict[str, int] = field(default_factory=dict)  # entry id → tokens of render.block(id, body)


class SliceSource(Protocol):
    """Looks a TCCM key up in the hot views; None on a miss (the builder then resolves it itself)."""

    def get(self, key: str, inputs: Mapping[str, str]) -> HotSlice | None: ...
