"""Parsed bundles kept in the process: copies for callers, bounded by count and bytes."""

from __future__ import annotations

import pytest

from planner.bundle.model import Bundle, BundleEntry, Totals
from planner.hotviews import parsed


def _bundle(text: str) -> Bundle:
    entry = BundleEntry(id="must_read:0:manifests", band="must_read", entry=0, selector="key:manifests", kind="key",
                        target="manifests", status="included", tokens=3, source="hot_view")
    totals = Totals(tokens=3, max_tokens=10, files=0, max_files=1, per_file_max_tokens=5, header_tokens=1)
    return Bundle(task_class="t", tccm_version="1", mode="repocontext", inputs={"a": "b"}, entries=[entry],
                  totals=totals, text=text, sha256="x", slices={"must_read:0:manifests": [1]}, files={"f": "x"})


def test_callers_get_their_own_containers() -> None:
    parsed.clear()
    kept = _bundle("one")
    first = parsed.put("etag-1", kept, 10)
    first.entries.append(first.entries[0])
    first.slices["extra"] = 1
    first.files.clear()
    again = parsed.get("etag-1")
    assert again is not None and again == kept and len(again.entries) == 1 and again.files == {"f": "x"}
    assert parsed.get("etag-2") is None


def test_bounded_by_count_and_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed.clear()
    monkeypatch.setattr(parsed, "MAX_ITEMS", 2)
    for name in ("a", "b", "c"):
        parsed.put(name, _bundle(name), 1)
    assert parsed.get("a") is None and parsed.get("b") is not None and parsed.get("c") is not None
    monkeypatch.setattr(parsed, "MAX_BYTES", 100)
    parsed.put("big", _bundle("big"), 90)
    assert parsed.get("b") is None and parsed.get("big") is not None
    parsed.clear()
