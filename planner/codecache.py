"""Source the standard library generates at run time, compiled once per install as a .pyc is.

Importing pydantic and its kin has the standard library compile ~1,000 small source strings in every process:
each dataclass's generated methods (dataclasses exec()s their text), each string annotation (typing's
ForwardRef compile()s it) and each namedtuple's __new__ (collections eval()s it). Parsing and compiling them
was ~24 % of the instructions of a bare `planner gather` of a small repository. What they compile to depends
only on the text and the interpreter, so a one-shot command (install(), called by the console entry point
before anything else is imported) takes them from one sealed marshal file per command in the user's cache
dir, and writes the file again at exit when it compiled anything new. Each code object is kept marshalled in
the file's mapping and decoded on its first use: a command's file holds what all its variants compiled (a
JavaScript tree's gather imports tree-sitter's bindings, a small Python one does not), and a process pays
only for its own.

No `from __future__ import annotations`, on purpose: compile() passed through here inherits this module's
future flags where it would have inherited typing's, and neither has any.
"""

import atexit
import builtins
import collections
import dataclasses
import hashlib
import sys
import typing
from pathlib import Path
from types import CodeType
from typing import Any

from planner import sealed

MAX_ENTRIES = 20_000  # past this (a process generating code from data, not from its imports) nothing is kept

Key = tuple[str, str, str]  # (mode, filename, source)

_stored: dict[Key, bytes] = {}  # from the file: each code object marshalled, decoded on first use
_codes: dict[Key, CodeType] = {}  # decoded or compiled in this process
_new: list[Key] = []
_counts = {"hits": 0, "misses": 0}


def install(command: str) -> None:
    """Serve the standard library's run-time compiles for `command` (a CLI command's name: each has its own
    file) from its cache file, and write the file at exit when something new was compiled. Idempotent."""
    if getattr(dataclasses, "exec", None) is _exec:
        return
    path, tag = _file(command)
    cached = sealed.loaded(sealed.opened(path, tag))
    if isinstance(cached, dict):  # a sealed file of ours; an entry that is not marshalled code is compiled again
        _stored.update(cached)
    # Module globals shadow the builtins for these modules' own calls only (the call sites are named in
    # the docstring); a source that is not plain text, or carries flags, is passed through untouched.
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    typing.compile = _compile  # type: ignore[attr-defined]
    collections.eval = _eval  # type: ignore[attr-defined]
    atexit.register(_save, path, tag)


def stats() -> dict[str, int]:
    """Compiles served from the cache (hits) and compiled anew (misses) in this process."""
    return dict(_counts)


def _file(command: str) -> tuple[Path, bytes]:
    # The bytecode belongs to this exact interpreter build and optimisation level.
    build = f"{sys.version}|{sys.implementation.cache_tag}|O{sys.flags.optimize}".encode()
    tag = hashlib.sha256(build).digest()
    name = "".join(c if c.isalnum() else "-" for c in command)[:40] or "planner"
    return sealed.cache_dir() / f"codecache-{name}-{tag.hex()[:16]}.marshal", tag


def _code(source: str, filename: str, mode: str) -> CodeType:
    key = (mode, filename, source)
    code = _codes.get(key) or _decoded(key)
    if code is not None:
        _counts["hits"] += 1
        return code
    code = builtins.compile(source, filename, mode, dont_inherit=True)
    _counts["misses"] += 1
    if len(_stored) + len(_new) < MAX_ENTRIES:
        _codes[key] = code
        _new.append(key)
    return code


def _decoded(key: Key) -> CodeType | None:
    """The stored code for `key`, decoded, or None (not stored, or not a code object: compiled again)."""
    blob = _stored.get(key)
    code = sealed.loaded(blob) if blob is not None else None
    if not isinstance(code, CodeType):
        return None
    _codes[key] = code
    return code


def _namespaces(globals: dict[str, Any] | None, locals: Any) -> tuple[dict[str, Any], Any]:
    """exec's and eval's own default when no globals are given: the namespaces of the frame that called them
    (two up from here), not those of the stand-in."""
    if globals is not None:
        return globals, locals
    frame = sys._getframe(2)
    return frame.f_globals, frame.f_locals if locals is None else locals


def _exec(source: Any, globals: dict[str, Any] | None = None, locals: Any = None, /, **kwargs: Any) -> None:
    globals, locals = _namespaces(globals, locals)
    if isinstance(source, str) and not kwargs:
        source = _code(source, "<string>", "exec")
    builtins.exec(source, globals, locals, **kwargs)


def _eval(source: Any, globals: dict[str, Any] | None = None, locals: Any = None, /) -> Any:
    globals, locals = _namespaces(globals, locals)
    if isinstance(source, str):
        source = _code(source, "<string>", "eval")
    return builtins.eval(source, globals, locals)


def _compile(source: Any, filename: Any, mode: str, flags: int = 0, dont_inherit: bool = False,
             optimize: int = -1, **kwargs: Any) -> Any:
    if isinstance(source, str) and isinstance(filename, str) and not flags and optimize == -1 and not kwargs:
        return _code(source, filename, mode)
    return builtins.compile(source, filename, mode, flags, dont_inherit, optimize, **kwargs)


def _save(path: Path, tag: bytes) -> None:
    """Write the cache file when this process compiled something it did not hold (nothing to do otherwise:
    most runs find every text cached)."""
    if not _new:
        return
    import marshal

    merged = {**_stored, **{key: marshal.dumps(_codes[key]) for key in _new}}
    sealed.write(path, tag, marshal.dumps(merged))
