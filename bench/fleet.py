"""A fleet of small git repositories with known-vulnerable pins, for bench/portfolio.py.

Five kinds, in rotation: requirements.txt, pyproject.toml, package.json, go.mod, and a clean
Python service (nothing to fix); every third repository also has a Dockerfile. The PyPI pins are
vulnerable under the real pypa advisory snapshot (../shared/advisories/pypa) and the bundled
examples/advisories; npm and Go pins are matched by the OSV records `write_advisories` writes,
modelled on the real advisories named in their ids (same packages and fixed versions).
"""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@example.com", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}

DOCKERFILE = "FROM python:3.11-slim\nWORKDIR /app\nCOPY . .\nRUN pip install --no-cache-dir -r requirements.txt\n" \
             "USER 1000\nCMD [\"python\", \"-m\", \"app\"]\n"
APP = ("import requests\nimport yaml\n\n\ndef fetch(url):\n"
       "    return yaml.safe_load(requests.get(url, timeout=5).text)\n")
JS_APP = "const _ = require('lodash');\nconst minimist = require('minimist');\n" \
         "module.exports = (argv) => _.pick(minimist(argv), ['name']);\n"
GO_APP = "package main\n\nimport (\n\t\"fmt\"\n\n\t\"golang.org/x/text/language\"\n)\n\n" \
         "func main() { fmt.Println(language.English) }\n"


def _requirements(i: int) -> dict[str, str]:
    return {"requirements.txt": f"# service {i}\nrequests==2.30.0\nPyYAML==5.3.1\nclick>=8\n", "app/__init__.py": APP}


def _pyproject(i: int) -> dict[str, str]:
    text = (f'[project]\nname = "svc{i}"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
            'dependencies = ["requests==2.30.0", "PyYAML==5.3.1", "click>=8"]\n')
    return {"pyproject.toml": text, "app/__init__.py": APP}


def _package_json(i: int) -> dict[str, str]:
    text = json.dumps({"name": f"web{i}", "version": "1.0.0", "main": "index.js",
                       "dependencies": {"lodash": "4.17.20", "minimist": "1.2.5", "express": "^4.18.2"}}, indent=2)
    return {"package.json": text + "\n", "index.js": JS_APP}


def _go_mod(i: int) -> dict[str, str]:
    text = f"module example.com/svc{i}\n\ngo 1.21\n\nrequire golang.org/x/text v0.3.7\n"
    return {"go.mod": text, "main.go": GO_APP}


def _clean(i: int) -> dict[str, str]:
    return {"requirements.txt": f"# service {i}\nrequests==2.32.3\nclick>=8\n", "app/__init__.py": APP}


KINDS = (_requirements, _pyproject, _package_json, _go_mod, _clean)


def files_for(i: int) -> dict[str, str]:
    files = {**KINDS[i % len(KINDS)](i), "README.md": f"# service {i}\n"}
    if i % 3 == 0:
        files["Dockerfile"] = DOCKERFILE
    return files


def _make(root: Path, i: int) -> Path:
    repo = root / f"svc{i:04d}"
    for rel, text in files_for(i).items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = {**os.environ, **GIT_ENV}
    # one shell per repository: init, add and commit without three process start-ups from Python each
    subprocess.run("git init -q -b main && git add -A && git commit -q -m 'initial'", shell=True, cwd=repo,
                   env=env, check=True, capture_output=True)
    return repo


def make_fleet(root: Path, count: int, threads: int = 4) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(lambda i: _make(root, i), range(count)))


def _osv(ident: str, ecosystem: str, package: str, fixed: str, summary: str) -> dict[str, object]:
    return {"id": ident, "modified": "2024-01-01T00:00:00Z", "published": "2022-01-01T00:00:00Z",
            "summary": summary, "details": f"Bench record modelled on {ident}: {summary}.",
            "affected": [{"package": {"ecosystem": ecosystem, "name": package},
                          "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": fixed}]}]}]}


def write_advisories(folder: Path) -> Path:
    """OSV records for the npm and Go pins (the PyPI ones come from the real snapshot or examples/)."""
    folder.mkdir(parents=True, exist_ok=True)
    records = [
        _osv("GHSA-35jh-r3h4-6jhm", "npm", "lodash", "4.17.21", "Command injection in lodash template"),
        _osv("GHSA-xvch-5gv4-984h", "npm", "minimist", "1.2.6", "Prototype pollution in minimist"),
        _osv("GO-2022-1059", "Go", "golang.org/x/text", "0.3.8", "Denial of service via crafted Accept-Language"),
    ]
    for record in records:
        (folder / f"{record['id']}.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    return folder
