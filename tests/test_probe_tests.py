"""The tests probe: test files, frameworks, imported modules, covered call sites, by_module."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import write_files

from repocontext.callsites.testfiles import kind_of_test, resolve_js
from repocontext.gather import gather
from repocontext.index import build_index
from repocontext.probe import ProbeContext
from repocontext.probes.call_sites import CallSitesProbe
from repocontext.probes.tests import TestsProbe

FILES = {
    "src/app/__init__.py": "",
    "src/app/config.py": "import yaml\n\n\ndef load(s):\n    return yaml.safe_load(s)\n",
    "src/app/net.py": "import requests\n\n\ndef fetch(u):\n    return requests.get(u)\n",
    "src/app/tests.py": "import unittest\nfrom app import config\n\n\nclass T(unittest.TestCase):\n"
                        "    def test_it(self):\n        config.load('a')\n",
    "tests/conftest.py": "import pytest\n",
    "tests/helpers.py": "import unittest\n\n\nclass Base(unittest.TestCase):\n    pass\n",
    "tests/test_config.py": "from app.config import load\n\n\ndef test_load():\n    assert load('a: 1')\n",
    "tests/test_net.py": "import requests\nimport pytest\n\n\ndef test_get():\n    requests.get\n",
    "tests/test_plain.py": "import json\n\n\ndef test_nothing():\n    assert json\n",
    "web/package.json": '{"devDependencies": {"vitest": "1.0.0"}}',
    "web/src/client.ts": "import axios from 'axios';\nexport const get = () => axios.get('/');\n",
    "web/src/client.test.ts": "import {test} from 'vitest';\nimport {get} from './client.js';\ntest('x', get);\n",
    "web/src/__tests__/more.js": "const {get} = require('../client');\n",
    "go.mod": "module example.com/svc\n\ngo 1.22\n",
    "pkg/conf/conf.go": 'package conf\n\nimport "gopkg.in/yaml.v3"\n\nfunc Load() { yaml.Marshal(nil) }\n',
    "pkg/conf/conf_test.go": 'package conf\n\nimport "testing"\n\nfunc TestLoad(t *testing.T) { Load() }\n',
    "cmd/app/main_test.go": 'package main\n\nimport (\n\t"testing"\n\t"example.com/svc/pkg/conf"\n)\n\n'
                            'func TestMain(t *testing.T) { conf.Load() }\n',
}


def test_end_to_end_coverage_across_languages(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    ctx = gather(repo, probes=[CallSitesProbe(), TestsProbe()])
    files = {f.path: (f.framework, f.modules, f.covers) for f in ctx.tests.files}
    assert files == {
        "cmd/app/main_test.go": ("go", ["example.com/svc/pkg/conf"], ["pkg/conf/conf.go:3", "pkg/conf/conf.go:5"]),
        "pkg/conf/conf_test.go": ("go", [], ["pkg/conf/conf.go:3", "pkg/conf/conf.go:5"]),
        # Django-style tests.py, found by its TestCase subclass; `from app import config` covers app/config.py
        "src/app/tests.py": ("unittest", ["app"], ["src/app/config.py:1", "src/app/config.py:5"]),
        "tests/conftest.py": ("pytest", ["pytest"], []),
        "tests/helpers.py": ("unittest", [], []),  # a TestCase subclass under tests/
        "tests/test_config.py": ("pytest", ["app.config"], ["src/app/config.py:1", "src/app/config.py:5"]),
        # imports requests directly: covers every requests call site
        "tests/test_net.py": ("pytest", ["pytest", "requests"], []),
        "tests/test_plain.py": ("pytest", [], []),
        "web/src/__tests__/more.js": ("vitest", ["web/src/client.ts"], ["web/src/client.ts:1", "web/src/client.ts:2"]),
        "web/src/client.test.ts": ("vitest", ["vitest", "web/src/client.ts"],
                                   ["web/src/client.ts:1", "web/src/client.ts:2"]),
    }
    assert ctx.tests.by_module == {
        "axios": ["web/src/__tests__/more.js", "web/src/client.test.ts"],
        "gopkg.in/yaml.v3": ["cmd/app/main_test.go", "pkg/conf/conf_test.go"],
        "pytest": ["tests/conftest.py", "tests/test_net.py"],
        "requests": ["tests/test_net.py"],
        "vitest": ["web/src/client.test.ts"],
        "yaml": ["src/app/tests.py", "tests/test_config.py"],
    }


def test_jest_is_the_default_and_prefix_imports_cover_submodules(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "import yaml\nyaml.dump(1)\n",
        "pkg/b.py": "import toml\n",
        "tests/test_a.py": "import pkg.a\n\n\ndef test():\n    pkg.a.f()\n",
        "tests/test_pkg.py": "import pkg\n",
        "ui/button.spec.jsx": "import {x} from './button';\n",
    })
    ctx = ProbeContext(root=tmp_path, files=build_index(tmp_path).files)
    ctx.upstream = {"call_sites": CallSitesProbe().run(ctx).values["call_sites"]}
    tests = TestsProbe().run(ctx).values["tests"]
    assert [(f["path"], f["framework"], f["covers"]) for f in tests["files"]] == [
        ("tests/test_a.py", "pytest", ["pkg/a.py:1", "pkg/a.py:2"]),
        ("tests/test_pkg.py", "pytest", []),  # pkg/__init__.py has no third-party call sites
        ("ui/button.spec.jsx", "jest", []),  # './button' does not exist
    ]
    assert tests["by_module"] == {"yaml": ["tests/test_a.py"]}


def test_test_file_names() -> None:
    named = ["tests/test_x.py", "x_test.py", "a/conftest.py", "a.test.ts", "b.spec.jsx", "src/__tests__/c.js",
             "d_test.go"]
    assert [kind_of_test(p) for p in named] == ["python", "python", "python", "js", "js", "js", "go"]
    assert [kind_of_test(p) for p in ("testing.py", "a.test.py", "contest.js", "__tests__/x.json", "x.go")] == [
        None] * 5


def test_resolve_js_tries_extensions_index_and_ts_sources() -> None:
    present = {"src/util.ts", "src/lib/index.js", "src/x.mjs"}
    exists = present.__contains__
    assert resolve_js("src/a.test.ts", "./util.js", exists) == "src/util.ts"
    assert resolve_js("src/a.test.ts", "./lib", exists) == "src/lib/index.js"
    assert resolve_js("src/sub/a.test.js", "../x", exists) == "src/x.mjs"
    assert resolve_js("a.test.js", "../outside", exists) is None
    assert resolve_js("a.test.js", "lodash", exists) is None
