"""Digests of what the planner makes of the real corpus trees: the stored RepoContext section by section, and
each shipped task class's bundle and provenance. Shared by tests/test_corpus_identity.py and its golden file
(`python -m tests.corpus_digest` prints them; PLANNER_UPDATE_GOLDEN=1 on the test rewrites the file).

Machine-specific values are left out: where the tree, the checkout and the advisories lie (meta.root,
repo_id, the TCCM paths, made relative to the checkout; the vulnerabilities probe's hashes, which carry the
advisory source's path and file stamps) and when it was gathered.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tarfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from planner import service
from planner.config import Settings
from repocontext.store import RepoContextStore
from tests import datapaths

ROOT = Path(__file__).resolve().parent.parent
CORPUS = datapaths.CORPUS
ADVISORIES = datapaths.PYPA
GOLDEN = Path(__file__).resolve().parent / "golden" / "corpus.json"
# Each shipped class's per-item input: the run-level bundle leaves it to the items (as dispatch does), and the
# first item's own bundle is digested too.
TASK_CLASSES = {"vulnerability-remediation": "package", "distroless-migration": "dockerfile"}
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]


def trees(work: Path) -> dict[str, Path]:
    """The corpus trees as git repositories under `work` (pythondotorg at its newest commit)."""
    found: dict[str, Path] = {}
    bundle = CORPUS / "pythondotorg.bundle"
    if bundle.is_file():
        found["pythondotorg"] = work / "pythondotorg"
        subprocess.run(["git", "clone", "-q", str(bundle), str(found["pythondotorg"])], check=True)
    archive = CORPUS / "awesome-compose.tar.gz"
    if archive.is_file():
        target = work / "awesome-compose"
        target.mkdir(parents=True)
        with tarfile.open(archive) as tar:
            tar.extractall(target, filter="data")
        inner = [p for p in target.iterdir() if not p.name.startswith(".")]
        root = inner[0] if len(inner) == 1 and inner[0].is_dir() else target
        subprocess.run([*GIT, "init", "-q", "-b", "main", str(root)], check=True)
        subprocess.run([*GIT, "-C", str(root), "add", "-A"], check=True)
        fixed = {**os.environ, "GIT_AUTHOR_DATE": "2024-05-18T00:00:00Z", "GIT_COMMITTER_DATE": "2024-05-18T00:00:00Z"}
        subprocess.run([*GIT, "-C", str(root), "commit", "-qm", "awesome-compose"], check=True, env=fixed)  # one sha
        found["awesome-compose"] = root
    return found


def _relative(path: str) -> str:
    return Path(path).resolve().relative_to(ROOT).as_posix()


def _sha(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def context_digest(settings: Settings, repo: Path) -> dict[str, str]:
    stored = RepoContextStore(settings.home).load_raw(repo)
    assert stored is not None
    meta = stored.pop("meta")
    # The advisory source's path and file stamps make the vulnerabilities probe's hashes machine-specific.
    probes = {name: {"version": run["version"]} if name == "vulnerabilities" else
              {"version": run["version"], "settings_hash": run["settings_hash"], "inputs_hash": run["inputs_hash"]}
              for name, run in meta["probes"].items()}
    digest = {"meta": _sha({"commit": meta["commit"], "dirty": meta["dirty"], "probes": probes})}
    digest.update({name: _sha(value) for name, value in stored.items()})
    return digest


def bundle_digest(settings: Settings, repo: Path, task_class: str, inputs: dict[str, str],
                  per_item: frozenset[str] = frozenset()) -> dict[str, str]:
    bundle, _, record = service.build_bundle(settings, task_class, repo, inputs, per_item=per_item)
    stable = record.stable_dict(hot_views=False)
    local = ("repo", "repo_id", "gathered_at")
    stable["repocontext"] = {k: v for k, v in stable["repocontext"].items() if k not in local}
    tccm = stable["tccm"]  # where the checkout lies is the machine's, the file's content (sha256) is not
    tccm["path"] = _relative(tccm["path"])
    tccm["chain"] = [_relative(path) for path in tccm["chain"]]
    return {"bundle": hashlib.sha256(bundle.text.encode()).hexdigest()[:16], "provenance": _sha(stable),
            "tokens": str(bundle.totals.tokens)}


def first_item(settings: Settings, repo: Path, key: str) -> str | None:
    context = RepoContextStore(settings.home).load(repo)
    assert context is not None
    if key == "package":
        return min((f.package for f in context.vulnerabilities.values()), default=None)
    return min((d.path for d in context.containers.dockerfiles), default=None)


def digest(home: Path, repo: Path) -> dict[str, Any]:
    """Gather `repo` cold into `home` and digest the result."""
    settings = replace(Settings.from_env(), home=home, advisories=(ADVISORIES,), redis_url=None)
    service.gather_repo(settings, repo, warm=False)
    found: dict[str, Any] = {"repocontext": context_digest(settings, repo)}
    for name, key in TASK_CLASSES.items():
        found[name] = bundle_digest(settings, repo, name, {}, frozenset({key}))
        item = first_item(settings, repo, key)
        if item is not None:
            found[f"{name} {key}={item}"] = bundle_digest(settings, repo, name, {key: item})
    return found


if __name__ == "__main__":
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as work:
        for name, tree in trees(Path(work)).items():
            sys.stdout.write(f"{name}: {orjson.dumps(digest(Path(work) / f'{name}-home', tree)).decode()}\n")
