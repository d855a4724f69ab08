"""The call_sites probe: grouping, stdlib/builtin exclusion, first-party marking, aliases, diagnostics."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import write_files

from repocontext.gather import gather
from repocontext.index import build_index
from repocontext.probe import ProbeContext
from repocontext.probes.call_sites import CallSitesProbe
from repocontext.probes.dependencies import DependenciesProbe
from repocontext.probes.tests import TestsProbe


def run(root: Path, files: dict[str, str], upstream: dict[str, Any] | None = None) -> tuple[dict[str, Any], list]:
    write_files(root, files)
    ctx = ProbeContext(root=root, files=build_index(root).files, upstream=upstream or {})
    output = CallSitesProbe().run(ctx)
    return output.values["call_sites"], output.diagnostics


def site(file: str, line: int, col: int, symbol: str, kind: str = "use") -> dict[str, Any]:
    return {"file": file, "line": line, "col": col, "symbol": symbol, "kind": kind}


def test_python_groups_exclude_stdlib_and_mark_first_party(tmp_path: Path) -> None:
    groups, diagnostics = run(tmp_path, {
        "src/app/__init__.py": "",
        "src/app/config.py": "import os\nimport yaml as y\nfrom . import util\n\ndef load(p):\n"
                             "    return y.safe_load(open(p)), util.x()\n",
        "src/app/util.py": "from PIL import Image\nImage.open('a')\n",
    })
    assert diagnostics == []
    assert groups == {
        "PIL": {"module": "PIL", "aliases": ["pillow", "pillow-simd"], "first_party": False, "sites": [
            site("src/app/util.py", 1, 16, "PIL.Image", "import"), site("src/app/util.py", 2, 0, "PIL.Image.open")]},
        "app": {"module": "app", "aliases": [], "first_party": True, "sites": [
            site("src/app/config.py", 3, 14, "app.util", "import"), site("src/app/config.py", 6, 33, "app.util.x")]},
        "yaml": {"module": "yaml", "aliases": ["pyyaml"], "first_party": False, "sites": [
            site("src/app/config.py", 2, 7, "yaml", "import"), site("src/app/config.py", 6, 11, "yaml.safe_load")]},
    }


def test_namespace_groups_and_dependency_aliases(tmp_path: Path) -> None:
    upstream = {"dependencies": {"google-cloud-storage": [{"ecosystem": "PyPI", "name": "google-cloud-storage"}]}}
    groups, _ = run(tmp_path, {
        "m.py": "from google.cloud import storage\nfrom google.protobuf import json_format\nimport google.auth\n"
                "storage.Client()\n",
    }, upstream)
    assert {k: (g["aliases"], [s["symbol"] for s in g["sites"]]) for k, g in groups.items()} == {
        "google.auth": (["google-auth"], ["google.auth"]),
        "google.cloud.storage": (["google-cloud-storage"], ["google.cloud.storage", "google.cloud.storage.Client"]),
        "google.protobuf": (["protobuf"], ["google.protobuf.json_format"]),
    }


def test_syntax_error_is_a_diagnostic_and_the_file_is_skipped(tmp_path: Path) -> None:
    groups, diagnostics = run(tmp_path, {"bad.py": "import yaml\ndef f(:\n", "ok.py": "import yaml\n"})
    assert [s["file"] for s in groups["yaml"]["sites"]] == ["ok.py"]
    assert [(d.probe, d.file, d.line, d.message) for d in diagnostics] == [
        ("call_sites", "bad.py", 2, "syntax error: invalid syntax; file skipped")]


def test_js_ts_and_go_syntax_errors_are_reported_and_what_parsed_is_kept(tmp_path: Path) -> None:
    groups, diagnostics = run(tmp_path, {
        "web/app.js": "import _ from 'lodash';\n_.map([], x => x);\nfunction (((( {\n",
        "web/ok.ts": "import _ from 'lodash';\n_.chunk([]);\n",
        "svc/main.go": 'package main\n\nimport "github.com/pkg/errors"\n\nfunc main() {\n\terrors.New("x")\n'
                       "\tif {{\n}\n",
    })
    assert [(d.file, d.line, d.message) for d in diagnostics] == [
        ("svc/main.go", 5, "syntax error; parsed around it, so call sites may be missing"),
        ("web/app.js", 3, "syntax error; parsed around it, so call sites may be missing"),
    ]
    assert [(s["file"], s["symbol"]) for s in groups["lodash"]["sites"]] == [
        ("web/app.js", "lodash"), ("web/app.js", "lodash.map"), ("web/ok.ts", "lodash"), ("web/ok.ts", "lodash.chunk")]
    assert "github.com/pkg/errors.New" in [s["symbol"] for s in groups["github.com/pkg/errors"]["sites"]]


def test_js_groups_by_package_and_skips_relative_and_builtins(tmp_path: Path) -> None:
    groups, _ = run(tmp_path, {
        "package.json": '{"name": "@acme/web"}',
        "web/a.ts": "import fs from 'node:fs';\nimport path from 'path';\nimport {x} from './local';\n"
                    "import {merge} from 'lodash/fp';\nimport own from '@acme/web/lib';\nmerge(1);\n",
        "web/b.cjs": "const {get} = require('@scope/http/client');\nget('u');\n",
    })
    assert groups == {
        "@acme/web": {"module": "@acme/web", "aliases": [], "first_party": True, "sites": [
            site("web/a.ts", 5, 7, "@acme/web/lib", "import")]},
        "@scope/http": {"module": "@scope/http", "aliases": ["@scope/http"], "first_party": False, "sites": [
            site("web/b.cjs", 1, 7, "@scope/http/client.get", "import"),
            site("web/b.cjs", 2, 0, "@scope/http/client.get")]},
        "lodash": {"module": "lodash", "aliases": ["lodash"], "first_party": False, "sites": [
            site("web/a.ts", 4, 8, "lodash/fp.merge", "import"), site("web/a.ts", 6, 0, "lodash/fp.merge")]},
    }


def test_go_groups_by_module_and_marks_the_repo_module(tmp_path: Path) -> None:
    groups, _ = run(tmp_path, {
        "go.mod": "module example.com/svc\n\ngo 1.22\n",
        "cmd/main.go": 'package main\n\nimport (\n\t"fmt"\n\tyaml "gopkg.in/yaml.v3"\n'
                       '\t"example.com/svc/internal/conf"\n)\n\nfunc main() { yaml.Marshal(conf.X); fmt.Println() }\n',
    })
    assert groups == {
        "example.com/svc": {"module": "example.com/svc", "aliases": [], "first_party": True, "sites": [
            site("cmd/main.go", 6, 1, "example.com/svc/internal/conf", "import"),
            site("cmd/main.go", 9, 27, "example.com/svc/internal/conf.X")]},
        "gopkg.in/yaml.v3": {"module": "gopkg.in/yaml.v3", "aliases": ["gopkg.in/yaml.v3"], "first_party": False,
                             "sites": [site("cmd/main.go", 5, 1, "gopkg.in/yaml.v3", "import"),
                                       site("cmd/main.go", 9, 14, "gopkg.in/yaml.v3.Marshal")]},
    }


def test_script_directories_are_first_party_unless_a_dependency_provides_the_name(tmp_path: Path) -> None:
    files = {"docker/build.py": "import docker\ndocker.from_env()\n", "docker/util.py": "",
             "vendor/app.min.js": "require('left-pad')"}
    groups, _ = run(tmp_path / "a", files)
    assert list(groups) == ["docker"] and groups["docker"]["first_party"] is True
    groups, _ = run(tmp_path / "b", files, {"dependencies": {"docker": [{"ecosystem": "PyPI", "name": "docker"}]}})
    assert groups["docker"] == {"module": "docker", "aliases": ["docker"], "first_party": False, "sites": [
        site("docker/build.py", 1, 7, "docker", "import"), site("docker/build.py", 2, 0, "docker.from_env")]}


def test_gather_end_to_end_with_dependencies(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({
        "requirements.txt": "PyYAML==6.0.1\ngoogle-cloud-storage==2.0.0\n",
        "svc/__init__.py": "",
        "svc/store.py": "from google.cloud import storage\nimport yaml\n\nstorage.Client(yaml.dump({}))\n",
    })
    ctx = gather(repo, probes=[DependenciesProbe(), CallSitesProbe()])
    assert sorted(ctx.call_sites) == ["google.cloud.storage", "yaml"]
    assert ctx.call_sites["google.cloud.storage"].aliases == ["google-cloud-storage"]
    assert ctx.call_sites["yaml"].aliases == ["pyyaml"]
    assert [(s.line, s.col, s.symbol, s.kind) for s in ctx.call_sites["yaml"].sites] == [
        (2, 7, "yaml", "import"), (4, 15, "yaml.dump", "use")]
    assert ctx.meta.probes["call_sites"].reused is False
    again = gather(repo, previous=ctx.model_dump(), probes=[DependenciesProbe(), CallSitesProbe()])
    assert again.meta.probes["call_sites"].reused is True
    assert again.call_sites == ctx.call_sites


def test_per_file_cache_survives_json_and_matches_a_fresh_gather(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({
        "pkg/__init__.py": "", "pkg/a.py": "from . import b\nimport yaml\nyaml.dump(b)\n", "pkg/b.py": "import toml\n",
        "tests/test_a.py": "from pkg import a\n",
    })
    probes = [CallSitesProbe(), TestsProbe()]
    cache: dict[str, Any] = {}
    first = gather(repo, probes=probes, cache=cache)
    assert sorted(cache) == sorted(probe.slot for probe in probes)
    cache = json.loads(json.dumps(cache))  # as persisted between gathers
    write_files(repo, {"pkg/b.py": "import toml\ntoml.loads('')\n", "pkg/__init__.py": "import requests\n"})
    second = gather(repo, previous=first.model_dump(), probes=probes, cache=cache)
    fresh = gather(repo, probes=probes)
    assert second.call_sites == fresh.call_sites and second.tests == fresh.tests
    assert [(s.file, s.symbol) for s in second.call_sites["pkg"].sites] == [
        ("pkg/a.py", "pkg.b"), ("pkg/a.py", "pkg.b"), ("tests/test_a.py", "pkg.a")]
    assert [s.symbol for s in second.call_sites["toml"].sites] == ["toml", "toml.loads"]
    assert second.tests.by_module == {"requests": ["tests/test_a.py"], "yaml": ["tests/test_a.py"]}


def test_one_layout_serves_both_probes_of_a_gather_and_only_for_the_same_inputs() -> None:
    """call_sites and tests ask for the layout of the same files: it is built once, and never handed out for
    other files (a daemon gathers many repositories in one process)."""
    from repocontext.probes.call_sites import RepoLayout

    results: dict[str, Any] = {"pkg/__init__.py": {}, "pkg/a.py": {}, "web/package.json": {"npm_name": "web"}}
    first = RepoLayout.from_results(results)
    assert RepoLayout.from_results({**results, "pkg/b.js": {}}) is first  # the same .py files and manifests
    assert first.py_modules == {"pkg/__init__.py": "pkg", "pkg/a.py": "pkg.a"} and first.npm_names == {"web"}
    other = RepoLayout.from_results({**results, "pkg/c.py": {}})
    assert other is not first and other.py_modules["pkg/c.py"] == "pkg.c"
    renamed = RepoLayout.from_results({**results, "web/package.json": {"npm_name": "site"}})
    assert renamed.npm_names == {"site"} and RepoLayout.from_results(results) is not renamed
