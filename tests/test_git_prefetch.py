"""`git.prefetch`: the listings a gather needs, started before its imports, are taken up by the gather."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from repocontext import git
from repocontext.index import build_index


def test_prefetched_listings_give_the_same_index_and_are_all_taken(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"a.py": "import os\n", "docs/readme.md": "hi\n"})
    (repo / "untracked.txt").write_text("new\n")
    (repo / "a.py").write_text("import sys\n")  # modified after the commit
    plain = build_index(repo)
    git.prefetch(repo)
    assert git._started  # started ahead
    fetched = build_index(repo)
    assert git._started == {}  # every listing was taken up: nothing left running
    assert [(f.path, f.sha) for f in fetched.files] == [(f.path, f.sha) for f in plain.files]
    assert fetched.dirty and "untracked.txt" in {f.path for f in fetched.files}


def test_outside_a_work_tree_nothing_is_left_running(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "x.txt").write_text("x\n")
    git.prefetch(folder)
    index = build_index(folder)
    assert git._started == {} and index.commit is None and [f.path for f in index.files] == ["x.txt"]
    git.prefetch(tmp_path / "missing")  # no such directory: nothing started, no error
    assert git._started == {}
