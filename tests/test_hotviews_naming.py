"""Hot-view keys: namespaced, versioned by renderer and TCCM hashes, tied to one snapshot of one commit."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from bundle_helpers import tccm_from
from conftest import commit_all, write_files

from planner.hotviews import naming
from repocontext.gather import gather
from repocontext.store import RepoContextStore


def test_keys_are_namespaced_and_versioned(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"a.txt": "a\n"})
    store = RepoContextStore(tmp_path / "home")
    store.save(gather(repo))
    snap = naming.snapshot(store, repo)
    assert snap is not None and snap.is_git
    tccm = tccm_from(tmp_path, "must_read: [{key: manifests}]\nbudget: {max_files: 1, max_tokens: 99, "
                               "per_file_max_tokens: 9}\n")
    key = naming.bundle_key(snap, tccm, {"package": "x"})
    assert key.startswith(f"{naming.PREFIX}:{naming.renderer_version()}:{snap.repo_id}:{snap.commit[:12]}:")
    assert f":bundle:{tccm.sha256[:16]}:" in key
    assert key != naming.bundle_key(snap, tccm, {"package": "y"})
    assert naming.slices_key(snap, naming.tccm_set([tccm])).startswith(snap.base + ":slices:")


def test_snapshot_identity_changes_with_each_gather_and_commit(tmp_path: Path,
                                                               make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"a.txt": "a\n"})
    store = RepoContextStore(tmp_path / "home")
    assert naming.snapshot(store, repo) is None
    context = gather(repo)
    store.save(context)
    first = naming.snapshot(store, repo)
    assert first == naming.snapshot(store, repo)  # stable while nothing is re-gathered
    store.save(context)
    assert naming.snapshot(store, repo) == first  # the same content is the same snapshot
    write_files(repo, {"b.txt": "new\n"})  # uncommitted: same commit, different content
    store.save(gather(repo))
    second = naming.snapshot(store, repo)
    assert second is not None and first is not None
    assert second.commit == first.commit and second.fingerprint != first.fingerprint
    write_files(repo, {"a.txt": "b\n"})
    commit_all(repo)
    store.save(gather(repo))
    third = naming.snapshot(store, repo)
    assert third is not None and third.commit != first.commit


def test_snapshot_of_a_directory_outside_git(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "f.txt").write_text("x\n")
    store = RepoContextStore(tmp_path / "home")
    store.save(gather(root))
    snap = naming.snapshot(store, root)
    assert snap is not None and not snap.is_git


def test_slice_fields_depend_only_on_the_inputs_a_key_uses() -> None:
    key = "dependencies.${inputs.package}"
    assert naming.slice_field(key, {"package": "a", "other": "z"}) == naming.slice_field(key, {"package": "a"})
    assert naming.slice_field(key, {"package": ""}) == naming.slice_field(key, {})
    assert naming.slice_field(key, {"package": "*"}) != naming.slice_field(key, {})  # a literal "*" is not widening
    assert naming.slice_field("manifests", {"package": "a"}) == naming.slice_field("manifests", {})


def test_tccm_set_hash_follows_content(tmp_path: Path) -> None:
    body = "must_read: [{key: manifests}]\nbudget: {max_files: 1, max_tokens: 99, per_file_max_tokens: 9}\n"
    before = naming.tccm_set([tccm_from(tmp_path, body)])
    assert before == naming.tccm_set([tccm_from(tmp_path, body)])
    assert before != naming.tccm_set([tccm_from(tmp_path, body.replace("99", "98"))])
    assert len(naming.renderer_version()) == 12 and os.path.isdir(Path(naming.__file__).parent)
