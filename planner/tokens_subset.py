"""Exact token counts of small texts without building the whole cl100k_base encoding.

Building tiktoken's encoder over all 100,256 ranks costs ~60 ms and loading the ranks ~20 ms: most of a
bare no-op dispatch's counting, whose bundle holds under a hundred tokens. BPE only ever looks up byte
strings that lie inside the text it encodes (the regex pieces, then the pairs merged within one piece), so
an encoder built from just the ranks of the text's own substrings gives the same tokens as the whole one.
The ranks are kept in the user's cache dir split by their first two bytes (sealed like the full cache,
see `planner.tokens`), so a small text loads only the shards its byte pairs name.
tests/test_tokens_subset.py holds every count to the full encoding's.
"""

from __future__ import annotations

import marshal
import re
import threading
from typing import Any

import tiktoken

# Past this the whole encoding is used: finding a text's substrings costs ~5 ms a KiB (in Python, and an
# encoder rebuilt, ~3 ms, for each text that brings new ranks), against ~80 ms to load the whole one once; a
# run with work counts far more, and pays at most this much before it loads the whole one.
MAX_BYTES = 4_096  # UTF-8 bytes of all texts counted so far (a no-op run's bundle counts ~600)
FORMAT = 1  # of the shard payload (in the cache file's name)

# Where no piece of cl100k's pre-tokenizer can run across: before a space or tab that follows a printable
# ASCII character. A piece holds whitespace after its first character only when it is all whitespace, or as
# the CR/LF that may end a run of punctuation; so BPE, which merges within a piece, never looks up a byte
# string across such a point, and the segments between them (far fewer distinct ones than offsets: words and
# keys repeat) are all the substrings need be taken from.
SEGMENT = re.compile(rb"(?<=[!-~])(?=[ \t])")

Shards = dict[bytes, tuple[tuple[int, ...], bytes]]  # two-byte prefix -> (token lengths present, marshal blob)


def split(ranks: dict[bytes, int]) -> dict[str, Any]:
    """The shard payload for `ranks`: single bytes whole, longer tokens by their first two bytes."""
    singles = {token: rank for token, rank in ranks.items() if len(token) == 1}
    groups: dict[bytes, dict[bytes, int]] = {}
    for token, rank in ranks.items():
        if len(token) > 1:
            groups.setdefault(token[:2], {})[token] = rank
    shards = {prefix: (tuple(sorted({len(t) for t in group})), marshal.dumps(group))
              for prefix, group in sorted(groups.items())}
    return {"singles": singles, "shards": shards}


class SubsetCounter:
    """Counts tokens with an encoder over the ranks the texts seen so far need, grown on demand."""

    def __init__(self, payload: dict[str, Any], pattern: str, special: dict[str, int],
                 max_bytes: int = MAX_BYTES) -> None:
        self._shards: Shards = payload["shards"]
        self._loaded: dict[bytes, dict[bytes, int]] = {}
        self._pattern, self._special = pattern, special
        self._ranks: dict[bytes, int] = dict(payload["singles"])
        self._encoding: tiktoken.Encoding | None = None
        self._seen, self._max_bytes = 0, max_bytes  # bytes counted so far, and the most it will count
        # A run's parallel work items count from threads: the ranks and the encoder built over them change
        # together, or a count could use an encoder that lacks ranks another thread just added.
        self._lock = threading.Lock()

    def count(self, text: str) -> int | None:
        """Tokens in `text` (as encode_ordinary), or None when the whole encoding should be used instead."""
        with self._lock:
            return self._count(text)

    def _count(self, text: str) -> int | None:
        if self._seen + len(text) > self._max_bytes:  # a character is at least one byte: no need to encode first
            return None
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: tiktoken replaces it first; the whole encoding does that
            return None
        self._seen += len(data)
        if self._seen > self._max_bytes:
            return None
        missing = {token: rank for token, rank in self._needed(data) if token not in self._ranks}
        if missing or self._encoding is None:
            self._ranks.update(missing)
            self._encoding = tiktoken.Encoding(name="cl100k_base-subset", pat_str=self._pattern,
                                               mergeable_ranks=self._ranks, special_tokens=self._special)
        return len(self._encoding.encode_ordinary(text))

    def _needed(self, data: bytes) -> list[tuple[bytes, int]]:
        """(token, rank) of every multi-byte token that occurs in a segment of `data` (see SEGMENT)."""
        found = []
        for segment in set(SEGMENT.split(data)):
            size = len(segment)
            for start in range(size - 1):
                shard = self._shard(segment[start:start + 2])
                if shard is None:
                    continue
                lengths, group = shard
                for length in lengths:
                    if start + length > size:
                        break
                    token = segment[start:start + length]
                    rank = group.get(token)
                    if rank is not None:
                        found.append((token, rank))
        return found

    def _shard(self, prefix: bytes) -> tuple[tuple[int, ...], dict[bytes, int]] | None:
        entry = self._shards.get(prefix)
        if entry is None:
            return None
        group = self._loaded.get(prefix)
        if group is None:
            group = self._loaded[prefix] = marshal.loads(entry[1])
        return entry[0], group
