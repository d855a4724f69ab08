"""The gather's fast paths give exactly what the plain ones give: shared analyses of identical blobs, tests
reusing call_sites' scans, prefix-searched COPY sources, the one-pass git listing, the store's bytes."""

from __future__ import annotations

import random
from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import Path

import pytest
from conftest import git

from repocontext import git as repo_git
from repocontext import secrets_scan
from repocontext.dockerfile.copies import Listing, _match
from repocontext.gather import gather
from repocontext.index import build_index
from repocontext.model import FileRecord
from repocontext.probe import ProbeContext
from repocontext.probes.call_sites import CallSitesProbe
from repocontext.probes.tests import TestsProbe
from repocontext.store import RepoContextStore

FILES = {
    "pkg/__init__.py": "",
    "pkg/a.py": "import yaml\nfrom . import b\nyaml.safe_load(b.x)\n",
    "pkg/b.py": "import yaml\nfrom . import b\nyaml.safe_load(b.x)\n",  # same blob as pkg/a.py
    "other/a.py": "import yaml\nfrom . import b\nyaml.safe_load(b.x)\n",  # same blob, no package
    "tests/test_a.py": "import yaml\nfrom . import b\nyaml.safe_load(b.x)\n",  # same blob, a test
    "tests/test_case.py": "import unittest\nimport pkg.a\n\n\nclass X(unittest.TestCase):\n    pass\n",
    "tests/helper.py": "import unittest\n\n\nclass Helper(unittest.TestCase):\n    pass\n",
    "lib/x.js": "const y = require('yaml');\ny.parse('a');\n",
    "lib/x.ts": "const y = require('yaml');\ny.parse('a');\n",  # same blob, other grammar
    "lib/x.test.js": "const y = require('yaml');\ny.parse('a');\n",
    "bad/one.py": "import os\ndef (:\n",
    "bad/two.py": "import os\ndef (:\n",
    "package.json": '{"name": "lib"}\n',
    "sub/package.json": '{"name": "lib"}\n',
}


def test_identical_blobs_share_one_analysis_with_the_same_outcome(make_repo: Callable[..., Path],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(FILES)
    calls: list[str] = []
    analyze = CallSitesProbe.analyze

    def counted(self: CallSitesProbe, ctx: ProbeContext, record: object) -> object:
        calls.append(record.path)  # type: ignore[attr-defined]
        return analyze(self, ctx, record)  # type: ignore[arg-type]

    monkeypatch.setattr(CallSitesProbe, "analyze", counted)
    shared_cache: dict = {}
    shared = gather(repo, workers=1, cache=shared_cache)
    assert sum(calls.count(p) for p in ("other/a.py", "pkg/a.py", "pkg/b.py", "tests/test_a.py")) == 1
    assert "bad/two.py" not in calls and "sub/package.json" not in calls and "lib/x.test.js" not in calls
    assert {"lib/x.js", "lib/x.ts"} <= set(calls)  # the same blob under another grammar is analysed again
    calls.clear()
    monkeypatch.setattr(CallSitesProbe, "content_class", lambda self, path: None)
    alone_cache: dict = {}
    alone = gather(repo, workers=1, cache=alone_cache)
    assert "pkg/b.py" in calls
    assert alone.model_dump(exclude={"meta"}) == shared.model_dump(exclude={"meta"})
    assert alone_cache == shared_cache
    sites = {(s.file, s.symbol) for s in shared.call_sites["pkg"].sites if s.file.startswith("pkg/")}
    assert sites == {("pkg/a.py", "pkg.b"), ("pkg/a.py", "pkg.b.x"), ("pkg/b.py", "pkg.b"), ("pkg/b.py", "pkg.b.x")}
    assert "other" in shared.call_sites  # the same blob outside the package resolves differently
    assert [d.file for d in shared.diagnostics if d.probe == "call_sites"] == ["bad/one.py", "bad/two.py"]


def test_tests_probe_reusing_call_sites_scans_matches_scanning_itself(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    files = build_index(repo).files
    after_call_sites = ProbeContext(root=repo, files=files)
    call_sites, _ = CallSitesProbe().run_cached(after_call_sites, {})
    after_call_sites.upstream = {"call_sites": call_sites.values["call_sites"]}
    reused, reused_cache = TestsProbe().run_cached(after_call_sites, {})
    alone = ProbeContext(root=repo, files=files, upstream=after_call_sites.upstream)
    scanned, scanned_cache = TestsProbe().run_cached(alone, {})
    assert reused.values == scanned.values and reused_cache == scanned_cache
    frameworks = {f["path"]: f["framework"] for f in reused.values["tests"]["files"]}
    assert frameworks["tests/test_case.py"] == "unittest" and frameworks["tests/helper.py"] == "unittest"
    assert frameworks["lib/x.test.js"] == "jest"


def _naive_match(pattern: str, files: list[str]) -> list[tuple[str, str | None]]:
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    found = []
    for path in files:
        segments = path.split("/")
        if len(segments) < len(parts) or not all(fnmatchcase(s, p) for s, p in zip(segments, parts, strict=False)):
            continue
        found.append((path, None if len(segments) == len(parts) else "/".join(segments[len(parts):])))
    return found


def test_copy_source_matching_by_prefix_equals_a_scan_in_any_order() -> None:
    rng = random.Random(3)
    names = ["a", "a-b", "a.b", "a0", "ab", "b", "conf", "x.ini", "run.sh", "[x]"]
    files = sorted({"/".join(rng.choice(names) for _ in range(rng.randint(1, 4))) for _ in range(400)})
    patterns = ["", "a", "a/b", "a-b", "a/a", "conf/*.ini", "*", "a/*/run.sh", "a/[ab]*", "[x]", "a/a-b/a",
                "nothing/here", "a/*", "*/*/*"]
    shuffled = files[:]
    rng.shuffle(shuffled)
    for listing in (files, shuffled):
        for pattern in patterns:
            assert _match(pattern, Listing(listing)) == _naive_match(pattern, listing), pattern


def test_git_listing_of_a_subdirectory_sees_only_it(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"top.py": "t", "sub/a.py": "a", "sub/b.py": "b", "sub/deep/c.py": "c"})
    (repo / "top.py").write_text("changed outside")
    (repo / "outside.py").write_text("untracked outside")
    (repo / "sub" / "a.py").write_text("changed")
    (repo / "sub" / "deep" / "c.py").unlink()
    (repo / "sub" / "new.py").write_text("n")
    listing = repo_git.list_tree(repo / "sub")
    assert sorted(listing.tracked) == ["a.py", "b.py", "deep/c.py"]
    assert (listing.modified, listing.deleted, listing.untracked) == ({"a.py"}, {"deep/c.py"}, ["new.py"])


def test_one_pass_git_listing_equals_the_separate_listings(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"a.py": "a", "b.py": "b", "d/c.py": "c", "d/e.py": "e", ".gitignore": "*.log\n",
                      "name with space.txt": "s"})
    (repo / "a.py").write_text("changed")
    (repo / "b.py").unlink()
    (repo / "d" / "c.py").unlink()
    (repo / "new.py").write_text("n")
    (repo / "d" / "new file.txt").write_text("n")
    (repo / "x.log").write_text("ignored")
    listing = repo_git.list_tree(repo)

    def names(*args: str) -> set[str]:
        return {p for p in git(repo, "ls-files", *args, "-z").split("\0") if p}

    assert listing.deleted == names("-d") == {"b.py", "d/c.py"}
    assert listing.modified == names("-m") - names("-d") == {"a.py"}
    assert listing.untracked == sorted(names("-o", "--exclude-standard")) == ["d/new file.txt", "new.py"]


def test_store_reads_back_what_it_wrote(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo({**FILES, "unicode.py": "import yaml  # é ✓\nyaml.load('ü')\n"})
    store = RepoContextStore(tmp_path / "home")
    cache: dict = {}
    context = gather(repo, cache=cache)
    store.save(context)
    store.save_cache(repo, cache)
    assert store.load_cache(repo) == {slot: results for slot, results in cache.items() if results}  # empty: no rows
    assert store.load_raw(repo) == context.model_dump(mode="json")


def test_secret_scan_reads_each_blob_once_and_denies_every_copy(make_repo: Callable[..., Path],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    repo = make_repo({"a/conf.py": f"KEY = '{key}'\n", "b/conf.py": f"KEY = '{key}'\n", "c.py": "x = 1\n",
                      "d.py": "x = 1\n", "big.bin": b"\0" * 10})
    reads: list[str] = []
    flagged = secrets_scan._flagged

    def counted(root: str, record: FileRecord) -> tuple[bool, str | None]:
        reads.append(record.path)
        return flagged(root, record)

    monkeypatch.setattr(secrets_scan, "_flagged", counted)
    context = gather(repo)
    assert [(d.path, d.rule) for d in context.denied] == [("a/conf.py", "content:aws-access-key-id"),
                                                         ("b/conf.py", "content:aws-access-key-id")]
    assert sorted(reads) == ["a/conf.py", "big.bin", "c.py"]
    assert [f.path for f in context.files] == ["big.bin", "c.py", "d.py"]
