"""Cache files in the user's cache dir that are trusted only when they are provably ours and intact.

A sealed file is a 32-byte tag (what the payload was made from: a source file's SHA-256, the interpreter),
the payload's SHA-256, then the payload. It is read back only when this user owns it, no one else can write
it, and both digests match: a truncated, corrupted, foreign or stale file is made again, never trusted.
Standard library only: the tokenizer cache (planner/tokens.py) reads one early in a count.
"""

import hashlib
import marshal
import os
from pathlib import Path
from typing import Any


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/tccm-planner, else ~/.cache/tccm-planner."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tccm-planner"


def seal(tag: bytes, payload: bytes) -> bytes:
    return tag + hashlib.sha256(payload).digest() + payload


def opened(path: Path, tag: bytes) -> bytes | None:
    """The payload of a sealed file, only when it is ours (this user's, writable by no one else), was made
    from `tag` and is intact; else None."""
    try:
        info = path.stat()
        if info.st_uid != os.getuid() or info.st_mode & 0o022:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    found, digest, payload = data[:32], data[32:64], data[64:]
    if found != tag or hashlib.sha256(payload).digest() != digest:
        return None
    return payload


def loaded(payload: bytes | None) -> Any:
    """A payload's marshalled value, or None when there is none or it does not decode."""
    try:
        return None if payload is None else marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None


def write(path: Path, tag: bytes, payload: bytes) -> None:
    """Write a sealed file atomically (a concurrent reader sees the old file or the whole new one), user-only.
    A read-only or full cache dir is no error: the cache is made again next time."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_bytes(seal(tag, payload))
        temporary.chmod(0o600)
        temporary.replace(path)
    except OSError:
        pass
