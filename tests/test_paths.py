"""String path helpers agree with PurePosixPath on index paths and on anything odd."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from repocontext.paths import is_plain, split_path, suffix

PATHS = ["a.py", "a/b.py", "a/b/c.tar.gz", ".py", "a/.hidden", "a/b.", "a/..py", "Dockerfile", "x/__init__.py",
         "./a.py", "a//b.py", "a/./b.py", "/abs/a.py", "a/b/", "a/.", ".", "..", "a/..", "a b/c d.txt", "ü/é.py"]


@pytest.mark.parametrize("path", PATHS)
def test_split_and_suffix_agree_with_purepath(path: str) -> None:
    pure = PurePosixPath(path)
    assert split_path(path) == (str(pure.parent), pure.name)
    assert suffix(path) == pure.suffix


def test_plain_paths_are_the_ones_the_index_lists() -> None:
    assert is_plain("a/b.py") and is_plain("a b/c") and is_plain("..")
    assert not any(is_plain(p) for p in ("./a", "a//b", "a/./b", "/a", "a/", "a/.", ".", ""))
