"""Incremental combine of call_sites and tests: after random edit sequences on real git repos, run_incremental
gives exactly the full combine's output (values, order, diagnostics) or None where it must; untouched parts keep
their identity; PathFacts answers exactly what RepoLayout derives from all paths."""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_all, git, write_files

from repocontext.callsites import go
from repocontext.callsites.common import python_import_names
from repocontext.callsites.pathfacts import PathFacts
from repocontext.index import build_index
from repocontext.model import FileRecord
from repocontext.probe import ABSENT, PerFileProbe, ProbeContext, ProbeOutput, index_diff
from repocontext.probes.call_sites import CallSitesProbe, RepoLayout
from repocontext.probes.dependencies import DependenciesProbe
from repocontext.probes.tests import TestsProbe

FILES = {
    "requirements.txt": "PyYAML==6.0\nrequests==2.31.0\n",
    "helpers.py": "import yaml\n\n\ndef dump(x):\n    return yaml.dump(x)\n",
    "scripts/tool.py": "import requests\nrequests.get('u')\n",
    "src/app/__init__.py": "",
    "src/app/config.py": "import yaml\n\n\ndef load(s):\n    return yaml.safe_load(s)\n",
    "src/app/net.py": "import requests\nfrom google.protobuf import json_format\n\n\ndef fetch(u):\n"
                      "    return requests.get(u), json_format.MessageToDict(u)\n",
    "src/app/util.py": "import os\n\n\ndef here():\n    return os.getcwd()\n",
    "src/app/sub/__init__.py": "",
    "src/app/sub/deep.py": "from .. import config\nimport requests\n\nconfig.load(requests.get('x'))\n",
    "src/app/tests.py": "import unittest\nfrom app import config\n\n\nclass T(unittest.TestCase):\n"
                        "    def test_it(self):\n        config.load('a')\n",
    "tests/helpers.py": "import json\n",
    "tests/test_config.py": "from app.config import load\n\n\ndef test_load():\n    assert load('a: 1')\n",
    "tests/test_net.py": "import requests\nimport pytest\nimport app.net\n\n\ndef test_get():\n"
                         "    app.net.fetch('x')\n",
    "tests/test_misc.py": "import helpers\n\n\ndef test_dump():\n    helpers.dump(1)\n",
    "web/package.json": '{"name": "web", "devDependencies": {"vitest": "1.0.0"}}',
    "web/src/client.ts": "import axios from 'axios';\nexport const get = () => axios.get('/');\n",
    "web/src/util.js": "import YAML from 'yaml';\nexport const y = YAML.parse('a: 1');\n",
    "web/src/client.test.ts": "import {test} from 'vitest';\nimport {get} from './client.js';\ntest('x', get);\n",
    "web/src/__tests__/more.js": "const {y} = require('../util');\n",
    "go.mod": "module example.com/svc\n\ngo 1.22\n",
    "pkg/conf/conf.go": 'package conf\n\nimport "gopkg.in/yaml.v3"\n\nfunc Load() { yaml.Marshal(nil) }\n',
    "pkg/conf/conf_test.go": 'package conf\n\nimport "testing"\n\nfunc TestLoad(t *testing.T) { Load() }\n',
    "cmd/app/main.go": 'package main\n\nimport "github.com/spf13/cobra"\n\nfunc main() { cobra.Command{} }\n',
    "cmd/app/main_test.go": 'package main\n\nimport (\n\t"testing"\n\t"example.com/svc/pkg/conf"\n)\n\n'
                            'func TestMain(t *testing.T) { conf.Load() }\n',
}
SOURCES = [p for p in FILES if p.endswith((".py", ".ts", ".js", ".go"))]
COMMENT = {".py": "# edited {n}\n", ".go": "// edited {n}\n"}


# -- read-only previous values: only the Mapping / Sequence protocols, same child object on every access --------

class _Map(Mapping[str, Any]):
    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = data
        self._kids: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        if key not in self._kids:
            self._kids[key] = frozen(self._data[key])
        return self._kids[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


class _Seq(Sequence[Any]):
    def __init__(self, data: Sequence[Any]) -> None:
        self._items = tuple(frozen(item) for item in data)

    def __getitem__(self, index: Any) -> Any:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)


def frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return _Map(value)
    return _Seq(value) if isinstance(value, list) else value


def plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [plain(v) for v in value]
    return value


# -- a repository under edit, with both probes' previous outputs and caches -------------------------------------

class Session:
    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.probes: list[PerFileProbe] = [CallSitesProbe(), TestsProbe()]
        self.caches: dict[str, dict[str, Any]] = {p.name: {} for p in self.probes}
        self.outputs: dict[str, ProbeOutput] = {}
        self.previous: dict[str, dict[str, Any]] = {}  # probe → the read-only previous values of the last step
        self.ctx = self._context()
        for probe in self.probes:
            self.outputs[probe.name], self.caches[probe.name] = probe.run_cached(self.ctx, {})
            self.ctx.upstream.update(self.outputs[probe.name].values)

    def _context(self) -> ProbeContext:
        ctx = ProbeContext(root=self.repo, files=build_index(self.repo).files)
        ctx.upstream = dict(DependenciesProbe().run(ctx).values)
        return ctx

    def step(self, use_lookup: bool = True) -> dict[str, ProbeOutput | None]:
        """Re-gather both probes incrementally and fully; asserts what must hold either way; returns the
        incremental outputs (None: fell back)."""
        previous_files = {f.path: f.sha for f in self.ctx.files}
        ctx = self._context()
        diff = index_diff(previous_files, ctx.files)
        found: dict[str, ProbeOutput | None] = {}
        for probe in self.probes:
            cache = self.caches[probe.name]
            prepared = probe.prepare_incremental(ctx, diff, lambda path, sha, c=cache: c[f"{path}\0{sha}"])
            assert prepared is not None
            changes, fresh = prepared
            cache.update(fresh)
            result_of = (lambda path, c=cache: c[f"{path}\0{ctx.record(path).sha}"]) if use_lookup else None
            before = self.outputs[probe.name]
            previous = self.previous[probe.name] = {key: frozen(value) for key, value in before.values.items()}
            # The caller's contract: an upstream key that changed must have been updated incrementally.
            upstream_ok = all(found.get(producer) is not None for producer in probe.incremental_upstream)
            incremental = (probe.run_incremental(ctx, previous, changes, before.diagnostics, result_of)
                           if upstream_ok else None)
            full, self.caches[probe.name] = probe.run_cached(ctx, cache)
            if incremental is not None:
                assert json.dumps(plain(incremental.values)) == json.dumps(full.values)
                assert incremental.diagnostics == full.diagnostics
                assert_identity(previous, incremental.values)
                ctx.upstream.update(incremental.values)  # downstream probes see the incremental value
            else:
                ctx.upstream.update(full.values)
            found[probe.name] = incremental
            self.outputs[probe.name] = full
        self.ctx = ctx
        return found


def assert_identity(previous: Mapping[str, Any], values: Mapping[str, Any]) -> None:
    """Every part equal to its previous counterpart is the previous object (untouched groups, entries, lists)."""
    if "call_sites" in values:
        before, after = previous["call_sites"], values["call_sites"]
        for key, group in after.items():
            if key in before and plain(before[key]) == plain(group):
                assert group is before[key], key
    if "tests" in values:
        old_files = {entry["path"]: entry for entry in previous["tests"]["files"]}
        for entry in values["tests"]["files"]:
            if entry["path"] in old_files and plain(old_files[entry["path"]]) == plain(entry):
                assert entry is old_files[entry["path"]]
        for key, paths in values["tests"]["by_module"].items():
            if key in previous["tests"]["by_module"] and list(previous["tests"]["by_module"][key]) == list(paths):
                assert paths is previous["tests"]["by_module"][key]


# -- edits ---------------------------------------------------------------------------------------------------------

def _edit(repo: Path, path: str, change: Callable[[str], str]) -> None:
    target = repo / path
    target.write_text(change(target.read_text()))


def _use(path: str, module: str) -> Callable[[str], str]:
    if path.endswith(".py"):
        return lambda text: f"import {module}\n{text}\n{module}.call(1)\n"
    if path.endswith(".go"):
        return lambda text: text.replace("import ", f'import _ "example.org/{module}"\nimport ', 1)
    return lambda text: f"import m_{module.replace('-', '_')} from '{module}';\n{text}"


EDITS: list[tuple[str, Callable[[random.Random, str], Callable[[str], str]]]] = [
    ("shift lines", lambda rng, path: lambda text: "\n" * rng.randint(1, 3) + text),
    ("comment", lambda rng, path: lambda text: text + COMMENT.get(path[-3:], "// edited {n}\n").format(n=rng.random())),
    ("use a known module", lambda rng, path: _use(path, rng.choice(["yaml", "requests", "axios", "lodash"]))),
    ("use a new module", lambda rng, path: _use(path, f"newmod{rng.randint(0, 3)}")),
    ("use a first-party module", lambda rng, path: _use(path, rng.choice(["app.util", "app.sub.deep", "helpers"]))),
    ("drop a module", lambda rng, path: lambda text: "".join(
        line for line in text.splitlines(keepends=True)
        if not any(m in line for m in ("yaml", "requests", "axios", "conf", "config")))),
    ("break the syntax", lambda rng, path: lambda text: text + ("def (:\n" if path.endswith(".py") else "}}}((\n")),
    ("become a unittest", lambda rng, path: lambda text: text + "\nimport unittest\n\n\nclass X(unittest.TestCase):\n"
                                                                  "    pass\n" if path.endswith(".py") else text),
    ("import a module of the repo", lambda rng, path: lambda text: (
        "from app.util import here\nfrom app import net\nhere()\n" + text if path.endswith(".py")
        else "import {get} from './client';\n" + text if path.endswith((".ts", ".js")) else text)),
]


def random_edits(rng: random.Random, repo: Path, count: int) -> list[str]:
    done = []
    for path in rng.sample(SOURCES, count):
        name, make = rng.choice(EDITS)
        _edit(repo, path, make(rng, path))
        done.append(f"{name}: {path}")
    return done


@pytest.mark.parametrize("seed", range(8))
def test_random_edit_sequences_match_the_full_combine(make_repo: Callable[..., Path], seed: int) -> None:
    rng = random.Random(seed)
    repo = make_repo(FILES)
    session = Session(repo)
    for step in range(6):
        done = random_edits(rng, repo, rng.randint(1, 3))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "--allow-empty", "-m", f"step {step}")
        found = session.step(use_lookup=step % 2 == 0)  # odd steps: unchanged files analysed again
        # Nothing here may decline: no file added or removed, no manifest, no group changing owner.
        assert all(output is not None for output in found.values()), done


def test_comment_only_edits_keep_every_group_and_entry(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    session = Session(repo)
    for path in ("src/app/config.py", "tests/test_net.py", "web/src/client.ts", "pkg/conf/conf.go"):
        _edit(repo, path, lambda text, p=path: text + ("# c\n" if p.endswith(".py") else "// c\n"))
    commit_all(repo)
    found = session.step()
    call_sites, tests = found["call_sites"], found["tests"]
    assert call_sites is not None and tests is not None
    before = session.previous["call_sites"]["call_sites"]
    assert list(call_sites.values["call_sites"]) == list(before)
    assert all(group is before[key] for key, group in call_sites.values["call_sites"].items())
    before = session.previous["tests"]["tests"]
    assert all(a is b for a, b in zip(tests.values["tests"]["files"], before["files"], strict=True))
    assert all(paths is before["by_module"][key] for key, paths in tests.values["tests"]["by_module"].items())


def test_line_shift_in_a_covered_file_updates_the_covering_tests(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    session = Session(repo)
    _edit(repo, "src/app/config.py", lambda text: "\n\n" + text)
    commit_all(repo)
    found = session.step()
    tests = found["tests"]
    assert tests is not None
    covers = {e["path"]: e["covers"] for e in tests.values["tests"]["files"]}
    assert covers["tests/test_config.py"] == ["src/app/config.py:3", "src/app/config.py:7"]
    assert covers["src/app/tests.py"] == ["src/app/config.py:3", "src/app/config.py:7"]


def test_first_third_party_site_in_a_file_reaches_the_tests_importing_it(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({**FILES, "tests/test_util.py": "from app import util\n\n\ndef test_here():\n    util.here()\n"})
    session = Session(repo)
    _edit(repo, "src/app/util.py", lambda text: "import requests\n" + text)
    commit_all(repo)
    found = session.step()
    assert found["call_sites"] is not None and found["tests"] is not None
    files = {e["path"]: e for e in found["tests"].values["tests"]["files"]}
    assert files["tests/test_util.py"]["covers"] == ["src/app/util.py:1"]
    assert "tests/test_util.py" in found["tests"].values["tests"]["by_module"]["requests"]


@pytest.mark.parametrize(("change", "files"), [
    ("add a file", {"src/app/extra.py": "import yaml\n"}),
    ("add a test", {"tests/test_new.py": "import requests\n"}),
    ("change package.json", {"web/package.json": '{"name": "web2"}'}),
    ("change go.mod", {"go.mod": "module example.com/other\n\ngo 1.22\n"}),
])
def test_layout_changes_fall_back(make_repo: Callable[..., Path], change: str, files: dict[str, str]) -> None:
    repo = make_repo(FILES)
    session = Session(repo)
    write_files(repo, files)
    _edit(repo, "src/app/config.py", lambda text: text + "# and a plain edit\n")
    commit_all(repo)
    found = session.step()
    assert found == {"call_sites": None, "tests": None}, change


def test_tests_probe_checks_its_own_inputs(make_repo: Callable[..., Path]) -> None:
    # vitest configs are no call_sites input: call_sites has nothing to do, tests must decline by itself.
    repo = make_repo({**FILES, "web/vitest.config.ts": "export default {}\n"})
    session = Session(repo)
    _edit(repo, "web/src/client.test.ts", lambda text: "\n" + text)
    commit_all(repo)
    found = session.step()  # the JS default framework now comes from the config file
    assert found["tests"] is not None
    _edit(repo, "web/vitest.config.ts", lambda text: text + "// c\n")
    commit_all(repo)
    found = session.step()
    assert found["call_sites"] is not None and found["tests"] is None


@pytest.mark.parametrize(("files", "edited"), [
    ({"logging/setup.py": "import requests\nrequests.get(1)\n"}, "logging/setup.py"),  # top "logging": stdlib
    ({"go.mod": "module svc\n\ngo 1.22\n"}, "pkg/conf/conf.go"),  # import path "svc/pkg/conf" looks like std
])
def test_tests_decline_what_the_previous_output_cannot_tell(make_repo: Callable[..., Path], files: dict[str, str],
                                                            edited: str) -> None:
    repo = make_repo({**FILES, **files})
    session = Session(repo)
    _edit(repo, edited, lambda text: "\n" + text)
    commit_all(repo)
    found = session.step()
    assert found["call_sites"] is not None and found["tests"] is None


def test_removed_file_falls_back(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    session = Session(repo)
    (repo / "scripts/tool.py").unlink()
    commit_all(repo)
    assert session.step() == {"call_sites": None, "tests": None}


def test_a_group_changing_owner_falls_back(make_repo: Callable[..., Path]) -> None:
    # npm package "yaml" is first-party here; Python's yaml is not. The group is Python's while a Python file
    # sorts first; dropping Python's uses hands it to the JS file: first_party flips, so no increment.
    files = {**FILES, "web/package.json": '{"name": "yaml"}'}
    repo = make_repo(files)
    session = Session(repo)
    assert session.outputs["call_sites"].values["call_sites"]["yaml"]["first_party"] is False
    for path in ("helpers.py", "src/app/config.py"):
        _edit(repo, path, lambda text: text.replace("yaml.safe_load", "str").replace("yaml.dump", "str")
              .replace("import yaml\n", ""))
    commit_all(repo)
    found = session.step()
    assert found["call_sites"] is None
    assert session.outputs["call_sites"].values["call_sites"]["yaml"]["first_party"] is True


def test_stale_previous_sites_are_detected(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    session = Session(repo)
    previous_files = {f.path: f.sha for f in session.ctx.files}
    _edit(repo, "helpers.py", lambda text: "\n" + text)
    commit_all(repo)
    ctx = session._context()
    probe = CallSitesProbe()
    cache = session.caches["call_sites"]
    prepared = probe.prepare_incremental(ctx, index_diff(previous_files, ctx.files), lambda p, s: cache[f"{p}\0{s}"])
    assert prepared is not None
    changes = {path: (new, new) for path, (_, new) in prepared[0].items()}  # a wrong "old" result
    assert probe.run_incremental(ctx, session.outputs["call_sites"].values, changes) is None


def test_index_diff_and_missing_cache_entries() -> None:
    def record(path: str, sha: str) -> FileRecord:
        return FileRecord(path=path, size=1, sha=sha)

    files = [record("a.py", "1"), record("b.py", "2"), record("d.py", "4")]
    assert index_diff({"a.py": "1", "b.py": "9", "c.py": "3"}, files) == {
        "b.py": ("9", "2"), "d.py": (None, "4"), "c.py": ("3", None)}
    ctx = ProbeContext(root=Path("."), files=files)
    changes = CallSitesProbe().prepare_incremental(ctx, {"c.py": ("3", None)}, lambda p, s: None)
    assert changes == ({"c.py": (None, ABSENT)}, {})

    def missing(path: str, sha: str) -> Any:
        raise KeyError(path)

    assert CallSitesProbe().prepare_incremental(ctx, {"b.py": ("9", "2")}, missing) is None


# -- PathFacts against RepoLayout, over random path sets ---------------------------------------------------------

def _random_paths(rng: random.Random) -> list[str]:
    dirs = ["", "src", "lib", "app", "src/app", "src/app/sub", "lib/x.y", "a.b", "a.b/c", "scripts", "tools/t",
            "pkg", "pkg/inner", "src/pkg", "ns/google/protobuf", "t", "t.d", "src/t"]
    names = ["__init__.py", "mod.py", "a.py", "t.py", "t.x.py", "x.y.py", "util.py", "main.go", "index.js"]
    return sorted({f"{d}/{n}" if d else n for d in dirs for n in names if rng.random() < 0.3})


@pytest.mark.parametrize("seed", range(25))
def test_path_facts_answer_as_repo_layout(seed: int) -> None:
    rng = random.Random(seed)
    paths = _random_paths(rng)
    present = set(paths)
    by_name: dict[str, list[str]] = {}
    for path in paths:
        by_name.setdefault(path.rpartition("/")[2], []).append(path)
    facts = PathFacts(paths, present.__contains__, lambda name: by_name.get(name, ()))
    py = [p for p in paths if p.endswith(".py")]
    layout = RepoLayout(py, set(), {})
    tops = {n for p in py for n in p.replace("/", ".").split(".")} | {"nothing", "src", "lib"}
    for top in sorted(tops):
        assert facts.has_top(top, True) == (top in layout.py_top), top
        assert facts.has_top(top, False) == (top in layout.py_top_weak), top
    names: dict[str, set[str]] = {}
    for path in py:
        assert facts.package_of(path) == layout.package_of(path), path
        for name in python_import_names(path, layout.packages):
            names.setdefault(name, set()).add(path)
    for name in sorted(names | {"nothing.here": set()}):
        assert facts.files_named(name) == sorted(names.get(name, ())), name
    folders = sorted({p.rpartition("/")[0] for p in paths} | {"nothing"})
    for folder in folders:
        assert facts.go_files_in(folder) == [p for p in paths if p.endswith(".go") and p.rpartition("/")[0] == folder]
    modules = {"": "example.com/m", "pkg": "example.com/m/pkg/v2", "tools": "example.com/m/pkg/v2/inner"}
    modules = {k: v for k, v in modules.items() if rng.random() < 0.7}
    by_import: dict[str, list[str]] = {}
    for folder in folders:
        imported = go.import_path_of_dir(folder, modules)
        if imported:
            by_import.setdefault(imported, []).append(folder)
    for imported, expected in by_import.items():  # every directory with that import path, and only such
        found = facts.go_dirs_importable_as(imported, modules)
        assert set(expected) <= set(found), imported
        assert all(go.import_path_of_dir(folder, modules) == imported for folder in found)


# -- timing on the 10k-file synthetic repository (printed, not asserted) -----------------------------------------

def test_timing_on_the_synthetic_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    try:
        import synthetic
    finally:
        sys.path.pop(0)
    repo = synthetic.build(tmp_path / "synthetic")
    session = Session(repo)
    for path in sorted(p for p in repo.rglob("*.py") if ".git" not in p.parts)[:10]:
        path.write_text(path.read_text() + "\n# touched\n")
    synthetic.git(repo, "add", "-A")
    synthetic.git(repo, "commit", "-q", "-m", "touch")
    previous_files = {f.path: f.sha for f in session.ctx.files}
    ctx = session._context()
    diff = index_diff(previous_files, ctx.files)
    timings = []
    for probe in session.probes:
        cache = session.caches[probe.name]
        started = time.perf_counter()
        prepared = probe.prepare_incremental(ctx, diff, lambda p, s, c=cache: c[f"{p}\0{s}"])
        assert prepared is not None
        analysed = time.perf_counter()
        output = probe.run_incremental(ctx, session.outputs[probe.name].values, prepared[0],
                                       session.outputs[probe.name].diagnostics,
                                       lambda p, c=cache: c[f"{p}\0{ctx.record(p).sha}"])
        combined = time.perf_counter()
        assert output is not None
        ctx.upstream.update(output.values)
        full, _ = probe.run_cached(ctx, {**cache, **prepared[1]})
        timings.append(f"{probe.name}: analyse changed files {(analysed - started) * 1000:.1f} ms, incremental "
                       f"combine {(combined - analysed) * 1000:.1f} ms, full combine (all cached) "
                       f"{(time.perf_counter() - combined) * 1000:.0f} ms")
        assert json.dumps(output.values) == json.dumps(full.values)
    with capsys.disabled():
        print(f"\n10-file change on {len(ctx.files)} files: " + "; ".join(timings))
