"""Hot-view key names, the renderer version, and cheap fingerprints of what a hot view was made from.

Every key lives under PREFIX and names the renderer version, the repository,
the commit and the snapshot it was rendered from:

    tccm-planner:hv:<renderer>:<repo id>:<commit>:<snapshot>:slices:<tccm set>   hash: slice → JSON
    tccm-planner:hv:<renderer>:<repo id>:<commit>:<snapshot>:bundle:<tccm>:<inputs>  hash: meta, deps, bundle
    tccm-planner:hv:<renderer>:<repo id>:<commit>:<snapshot>:meta               JSON: what warm did
    tccm-planner:hv:repo:<repo id>:keys    set: every key written for the repository (for invalidation)
    tccm-planner:hv:stats                  hash: hit/miss counters

The renderer version is a hash of the code that decides a bundle's bytes, so
a change to the builder, renderer, key resolver, tokenizer or secret rules
retires every old hot view without anyone bumping a number.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import orjson

from planner.tccm.model import TCCM, input_refs
from repocontext import parts
from repocontext.store import WORKTREE_KEY, RepoContextStore, repo_id

PREFIX = "tccm-planner:hv"
STATS_KEY = f"{PREFIX}:stats"
_ROOT = Path(__file__).resolve().parent.parent.parent
_RENDER_SOURCES = ("planner/bundle", "planner/tokens.py", "planner/hotviews/slices.py", "repocontext/secrets.py",
                   "repocontext/secret_rules.py", "repocontext/secret_rules.yaml", "repocontext/globs.py")


@lru_cache(maxsize=1)
def renderer_version() -> str:
    digest = hashlib.sha256()
    for name in _RENDER_SOURCES:
        path = _ROOT / name
        for file in sorted(path.glob("*.py")) if path.is_dir() else [path]:
            digest.update(file.name.encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


@dataclass(frozen=True)
class Snapshot:
    """The stored RepoContext a hot view belongs to, identified without reading it."""

    repo_id: str
    commit: str  # the snapshot's name: the commit, or "worktree" outside git
    fingerprint: str  # the snapshot file's identity; it is replaced atomically (new inode) on every gather

    @property
    def base(self) -> str:
        return f"{PREFIX}:{renderer_version()}:{self.repo_id}:{self.commit[:12]}:{self.fingerprint}"

    @property
    def is_git(self) -> bool:
        return self.commit != WORKTREE_KEY


def snapshot(store: RepoContextStore, root: Path) -> Snapshot | None:
    """The latest snapshot of `root` (one small read), or None when there is none. Its manifest's name
    carries a digest of the manifest, which names every part: a new gather gives a new name."""
    path = store.latest_path(root)
    if path is None:
        return None
    commit = parts.manifest_key(path.name)
    return Snapshot(repo_id(root), commit, path.name[len(commit) + 1: -len(parts.SUFFIX)])


def repo_index(repo: str) -> str:
    return f"{PREFIX}:repo:{repo}:keys"


def meta_key(snap: Snapshot) -> str:
    return f"{snap.base}:meta"


def tccm_set(tccms: Iterable[TCCM]) -> str:
    """A hash of the TCCMs in service (names and content hashes): the slice set is a function of it."""
    pairs = sorted((t.task_class, t.sha256) for t in tccms)
    return hashlib.sha256(orjson.dumps(pairs)).hexdigest()[:16]


def slices_key(snap: Snapshot, set_hash: str) -> str:
    return f"{snap.base}:slices:{set_hash}"


def used_inputs(key: str, inputs: Mapping[str, str]) -> dict[str, str | None]:
    """The inputs a key depends on; an empty input widens like a missing one (as keys.resolve does)."""
    return {name: inputs.get(name) or None for name in sorted(set(input_refs(key)))}


def slice_field(key: str, inputs: Mapping[str, str | None]) -> str:
    """The hash field of one slice: the key as written plus exactly the inputs it uses."""
    return orjson.dumps([key, used_inputs(key, {k: v for k, v in inputs.items() if v})]).decode()


def bundle_key(snap: Snapshot, tccm: TCCM, inputs: Mapping[str, str], per_item: frozenset[str] = frozenset()) -> str:
    shown = hashlib.sha256(orjson.dumps([sorted(inputs.items()), sorted(per_item)])).hexdigest()[:16]
    return f"{snap.base}:bundle:{tccm.sha256[:16]}:{shown}"
