"""Issue 27: small texts are counted exactly without building the whole cl100k_base encoding."""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import os
import tarfile
import typing
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner import tokens, tokens_subset

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
PIECES = ["alpha", "Beta", "123", "4567", "'s", "'ll", "'VE", " ", "  ", "   ", "\t", "\n", "\r\n", "\n\n", "{",
          "}", ":", ",", '"', "-", "...", "!?", "é", "日本語", "\u00a0", "\u2028", "\u3000", "_x", "é'", "ü1", "🙂",
          "REDACTED-aws", "==2.31.0", "<|endoftext|>", "http://", "\x1c", "\x85", "\u0301", "ǅ", "Ⅻ", "٣",
          " \t", "\t ", ".\n", ". ", ";\r\n", "x\t", "\u3000 ", "é ", ")\n    ", "\x0b", "\x0c", "1 2"]


@pytest.fixture(scope="module")
def payload() -> dict[str, Any]:
    return _payload()


@functools.cache
def _payload() -> dict[str, Any]:
    return tokens_subset.split(tokens._ranks())


def _fresh(payload: dict[str, Any], max_bytes: int = 1 << 30) -> tokens_subset.SubsetCounter:
    """A counter with no byte cap unless one is given: the counts are what these tests check."""
    return tokens_subset.SubsetCounter(payload, tokens._PAT, tokens._SPECIAL, max_bytes)


def _full(text: str) -> int:
    return len(tokens.encoding().encode_ordinary(text))


@settings(max_examples=int(os.environ.get("TOKENS_SUBSET_EXAMPLES", "300")), deadline=None)
@given(st.lists(st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=50), min_size=1,
                max_size=3))
def test_every_count_is_the_whole_encodings(texts: list[list[str]]) -> None:
    counter = _fresh(_payload())  # one per example, counting a few texts in turn as a bundle build does
    for parts in texts:
        text = "".join(parts)
        counted = counter.count(text)
        if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
            assert counted is None  # tiktoken replaces a lone surrogate first: the whole encoding does that
        else:
            assert counted == _full(text), text


def test_real_files_count_the_same(payload: dict[str, Any]) -> None:
    # Each file with a fresh counter, as a process would: source, YAML, JSON, lockfile slices, prose.
    files = sorted(Path(__file__).resolve().parents[1].glob("planner/**/*.py"))[:40]
    files += sorted(Path(__file__).resolve().parents[1].glob("task-class-contexts/*.yaml"))
    files += sorted(Path(__file__).resolve().parents[1].glob("examples/**/*"))[:40]
    checked = 0
    for path in files:
        if not path.is_file():
            continue
        text = path.read_bytes()[:8000].decode("utf-8", "ignore")
        assert _fresh(payload).count(text) == _full(text), path
        checked += 1
    assert checked >= 40


def test_large_texts_surrogates_and_many_bytes_go_to_the_whole_encoding(payload: dict[str, Any]) -> None:
    counter = _fresh(payload, tokens_subset.MAX_BYTES)
    assert counter.count("x" * (tokens_subset.MAX_BYTES + 1)) is None
    assert counter.count("a\udc80b") is None
    source = "".join(inspect.getsource(module) for module in (argparse, typing, json))  # varied real text
    texts = [source[at: at + 700] for at in range(0, 30_000, 700)]
    grown = [counter.count(text) for text in texts]
    served = sum(len(text) for text in texts[: grown.index(None)])
    assert tokens_subset.MAX_BYTES - 700 < served <= tokens_subset.MAX_BYTES  # then the whole encoding
    assert all(counted is None for counted in grown[grown.index(None):])
    for text, counted in zip(texts, grown, strict=True):
        assert counted is None or counted == _full(text)


def test_threads_sharing_one_counter_count_exactly(payload: dict[str, Any]) -> None:
    """A run's parallel work items count from threads through the one process-wide counter."""
    counter = _fresh(payload)
    source = inspect.getsource(argparse)
    texts = [source[at: at + 97] for at in range(0, 97 * 64, 97)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        counted = list(pool.map(counter.count, texts))
    assert counted == [_full(text) for text in texts]


def test_few_texts_are_counted_without_the_whole_encoding_and_a_damaged_shard_file_is_rewritten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    caches = (tokens.encoding, tokens._subset, tokens._count_memo)
    for cached in caches:
        cached.cache_clear()
    try:
        with tokens.few_texts():
            assert tokens.count("hello world") == 2  # no shards yet: the whole encoding, which writes them
            assert tokens.encoding.cache_info().currsize == 1
            shards = tokens._shard_file()
            assert shards.stat().st_mode & 0o777 == 0o600 and tokens._opened(shards) is not None
            for cached in caches:
                cached.cache_clear()
            assert tokens.count("hello world, again") == 4
            assert tokens.encoding.cache_info().currsize == 0  # counted from the shards alone
            data = bytearray(shards.read_bytes())
            data[-5] ^= 0x01
            shards.write_bytes(bytes(data))
            tokens._subset.cache_clear()
            assert tokens._subset() is None  # a damaged shard file is never trusted
            assert tokens.count("and once more") == 3 and tokens.encoding.cache_info().currsize == 1
            assert tokens._opened(shards) is not None  # sealed again by the whole encoding's load
        for cached in caches:
            cached.cache_clear()
        assert tokens.count("not asked for") == 3 and tokens.encoding.cache_info().currsize == 1
    finally:  # the next test loads from its own cache dir again
        for cached in caches:
            cached.cache_clear()


@pytest.mark.skipif(not CORPUS.is_dir(), reason="needs ../shared/corpus")
def test_corpus_text_counts_the_same(payload: dict[str, Any]) -> None:
    checked = 0
    for archive in sorted(CORPUS.glob("*.tar.gz")):
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if m.isfile()][:30]
            for member in members:
                handle = tar.extractfile(member)
                text = handle.read()[:8000].decode("utf-8", "ignore") if handle else ""
                assert _fresh(payload).count(text) == _full(text), member.name
                checked += 1
    assert checked >= 30
