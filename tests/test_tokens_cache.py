"""Issue 23 §8: the decoded-ranks cache in the user's cache dir is used only when it is sealed and intact."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from planner import tokens


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    tokens._ranks()  # writes the sealed cache
    return tokens._cache_file()


def test_the_cache_is_sealed_private_and_used(cache: Path) -> None:
    assert cache.stat().st_mode & 0o777 == 0o600
    ranks = tokens._unsealed(cache)
    assert ranks is not None and ranks[b"hello"] == 15339  # cl100k_base's rank for "hello"


@pytest.mark.parametrize("damage", ["flip", "truncate", "unsealed", "group-writable"])
def test_a_damaged_or_foreign_cache_is_never_trusted(cache: Path, damage: str) -> None:
    data = bytearray(cache.read_bytes())
    if damage == "flip":  # a rank changed in place: the payload digest no longer matches
        data[-10] ^= 0x01
        cache.write_bytes(bytes(data))
    elif damage == "truncate":
        cache.write_bytes(bytes(data[: len(data) // 2]))
    elif damage == "unsealed":  # the old format: a bare marshal dump
        cache.write_bytes(bytes(data[64:]))
    else:
        os.chmod(cache, 0o666)
    assert tokens._unsealed(cache) is None
    assert tokens._ranks()[b"hello"] == 15339  # decoded again from the shipped, checked file
    assert tokens._unsealed(cache) is not None  # and sealed again
