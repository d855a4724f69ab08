"""On the real corpus trees, what the planner makes is byte-for-byte what it made before (the golden digests in
tests/golden/corpus.json): every speed-up must leave RepoContexts, bundles and provenance as they were, and
so must the number of gather processes and the re-gather path. A change that means to alter the output
updates the golden file on purpose: PLANNER_UPDATE_GOLDEN=1 python -m pytest tests/test_corpus_identity.py.

Skipped, saying so, where ../shared/corpus is absent (it is data beside the project, never copied into it)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.corpus_digest import ADVISORIES, CORPUS, GIT, GOLDEN, digest, trees

pytestmark = pytest.mark.skipif(not (CORPUS.is_dir() and ADVISORIES.is_dir()),
                                reason=f"the real-repository corpus is not at {CORPUS}")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return trees(tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module")
def cold(corpus: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    homes = tmp_path_factory.mktemp("homes")
    return {name: digest(homes / name, tree) for name, tree in corpus.items()}


def test_output_matches_the_golden_digests(cold: dict[str, dict[str, Any]]) -> None:
    if os.environ.get("PLANNER_UPDATE_GOLDEN") == "1":
        GOLDEN.write_bytes(orjson.dumps(cold, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    golden = orjson.loads(GOLDEN.read_bytes())
    assert set(cold) == set(golden)
    for name, found in cold.items():
        changed = {part: sorted(k for k in found[part] if found[part][k] != golden[name].get(part, {}).get(k))
                   for part in found}
        assert found == golden[name], f"{name}: changed {({k: v for k, v in changed.items() if v})}"


def test_one_gather_process_makes_the_same_context(corpus: dict[str, Path], cold: dict[str, dict[str, Any]],
                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_GATHER_WORKERS", "1")
    for name, tree in corpus.items():
        assert digest(tmp_path / name, tree)["repocontext"] == cold[name]["repocontext"], name


def test_a_regather_after_a_commit_equals_a_cold_gather(corpus: dict[str, Path], tmp_path: Path) -> None:
    for name, tree in corpus.items():
        warm = tmp_path / f"{name}-warm"
        digest(warm, tree)
        readme = tree / "README.md"
        readme.write_text(readme.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
        subprocess.run([*GIT, "-C", str(tree), "commit", "-qam", "touch"], check=True)
        again, fresh = digest(warm, tree), digest(tmp_path / f"{name}-cold", tree)
        assert again == fresh, name
        subprocess.run([*GIT, "-C", str(tree), "reset", "-q", "--hard", "HEAD~1"], check=True)
