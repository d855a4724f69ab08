"""The builder's file reads after the snapshot: links swapped in, files gone — nothing leaves the repo."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from planner.bundle.view import read_repo_file
from tests.bundle_helpers import budget, make_bundle, tccm_from

FILES = {"conf/app.txt": "inside\n", "notes.txt": "notes\n", "gone.txt": "bye\n"}


def test_reads_after_the_snapshot_never_follow_links_out(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo(FILES)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "app.txt").write_text("OUTSIDE SECRET\n")
    (outside / "notes.txt").write_text("OUTSIDE NOTES\n")
    tccm = tccm_from(tmp_path, "should_read:\n  - glob: '**/*.txt'\n" + budget(2000, 500))
    home = tmp_path / "home"
    make_bundle(repo, home, tccm)  # the snapshot sees plain files
    shutil.rmtree(repo / "conf")
    os.symlink(outside, repo / "conf")  # a directory on the way becomes a link out of the repository
    (repo / "notes.txt").unlink()
    os.symlink(outside / "notes.txt", repo / "notes.txt")  # the file itself becomes a link
    (repo / "gone.txt").unlink()
    bundle = make_bundle(repo, home, tccm, gathered=False)
    fates = {e.target: (e.status, e.detail) for e in bundle.entries}
    assert fates["conf/app.txt"] == ("denied", "path leaves the repository")
    assert fates["notes.txt"] == ("skipped", "symlink not followed")
    assert fates["gone.txt"] == ("skipped", "file no longer exists (re-run `planner gather`)")
    assert "OUTSIDE" not in bundle.text and bundle.files == {}


def test_a_plain_read_returns_the_text(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    assert read_repo_file(repo, "conf/app.txt").text == "inside\n"
    assert read_repo_file(repo, "conf/../notes.txt").text == "notes\n"  # normalised, still inside
    assert read_repo_file(repo, "../outside.txt").status == "denied"


def test_a_linked_directory_that_stays_inside_is_read_through(make_repo: Callable[..., Path]) -> None:
    """Reads open each directory without following links; a link on the way is then resolved, and one that
    stays inside the repository is read as before (exactly, for patches, too)."""
    repo = make_repo(FILES)
    os.symlink(repo / "conf", repo / "alias")
    assert read_repo_file(repo, "alias/app.txt").text == "inside\n"
    assert read_repo_file(repo, "alias/app.txt", exact=True).text == "inside\n"
    assert read_repo_file(repo, "conf/app.txt/x").status == "skipped"  # a file on the way: unreadable
    assert read_repo_file(repo, "/etc/hostname").status == "denied"
