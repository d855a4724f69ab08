"""The dependencies probe: every format together, end to end through gather() on a git repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from repocontext.gather import gather
from repocontext.model import FileRecord
from repocontext.probe import ProbeContext
from repocontext.probes.dependencies import DependenciesProbe

FILES = {
    "requirements.txt": "-r requirements/base.txt\n-c constraints.txt\n-r deps/extra.txt\nFlask>=2.0\n",
    "requirements/base.txt": "requests==2.31.0 \\\n    --hash=sha256:0000\n",
    "requirements/dev.in": "pytest\n",
    "constraints.txt": "urllib3<2\n",
    "deps/extra.txt": "idna==3.4\n",  # outside the name globs: reached only through -r
    "MANIFEST.in": "include README.md\nrecursive-include src *.py\n",
    "pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.11"\nflask = "^2.3"\n',
    "poetry.lock": ('[[package]]\nname = "flask"\nversion = "2.3.3"\n\n[package.dependencies]\nwerkzeug = "*"\n\n'
                    '[[package]]\nname = "werkzeug"\nversion = "2.3.7"\n'),
    "web/package.json": '{\n  "dependencies": {\n    "express": "^4.18.2"\n  }\n}\n',
    "web/package-lock.json": json.dumps({"lockfileVersion": 3, "packages": {
        "": {"dependencies": {"express": "^4.18.2"}},
        "node_modules/express": {"version": "4.18.2", "dependencies": {"qs": "6.11.0"}},
        "node_modules/qs": {"version": "6.11.0"},
    }}, indent=2),
    "broken/package.json": '{"dependencies": {\n',
    "go/go.mod": "module m\n\nrequire golang.org/x/net v0.17.0 // indirect\n",
    "go/go.sum": "golang.org/x/net v0.17.0 h1:abc=\n",
}


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], cwd=root, check=True)
    return root


def _brief(records: list) -> list[tuple]:
    return [(d.ecosystem, d.version, d.constraint, d.direct, d.path, d.dev, d.file, d.line, d.kind) for d in records]


def test_gather_end_to_end(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    ctx = gather(root, probes=[DependenciesProbe()])
    deps = ctx.dependencies
    assert list(deps) == ["express", "flask", "golang.org/x/net", "idna", "pytest", "qs", "requests", "urllib3",
                          "werkzeug"]
    assert _brief(deps["flask"]) == [
        ("PyPI", "2.3.3", None, True, [], False, "poetry.lock", 1, "lockfile"),
        ("PyPI", None, "^2.3", True, [], False, "pyproject.toml", 3, "manifest"),
        ("PyPI", None, ">=2.0", True, [], False, "requirements.txt", 4, "manifest"),
    ]
    assert _brief(deps["werkzeug"]) == [
        ("PyPI", "2.3.7", None, False, ["flask", "werkzeug"], False, "poetry.lock", 8, "lockfile")]
    assert _brief(deps["idna"]) == [("PyPI", "3.4", "==3.4", True, [], False, "deps/extra.txt", 1, "manifest")]
    assert _brief(deps["urllib3"]) == [("PyPI", None, "<2", False, [], False, "constraints.txt", 1, "constraint")]
    assert _brief(deps["requests"]) == [
        ("PyPI", "2.31.0", "==2.31.0", True, [], False, "requirements/base.txt", 1, "manifest")]
    assert _brief(deps["pytest"]) == [("PyPI", None, None, True, [], True, "requirements/dev.in", 1, "manifest")]
    assert _brief(deps["qs"]) == [
        ("npm", "6.11.0", None, False, ["express", "qs"], False, "web/package-lock.json", 15, "lockfile")]
    assert [d.file for d in deps["express"]] == ["web/package-lock.json", "web/package.json"]
    assert _brief(deps["golang.org/x/net"]) == [
        ("Go", "v0.17.0", "v0.17.0", False, [], False, "go/go.mod", 3, "manifest")]
    assert deps["golang.org/x/net"][0].checksummed is True
    mine = [(d.level, d.file, d.line) for d in ctx.diagnostics if d.probe == "dependencies"]
    assert mine == [("error", "broken/package.json", 2)]
    assert ctx.meta.probes["dependencies"].version == "5"


def test_deterministic_and_incremental(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    first = gather(root, probes=[DependenciesProbe()])
    second = gather(root, probes=[DependenciesProbe()])
    assert first.model_dump()["dependencies"] == second.model_dump()["dependencies"]
    previous = first.model_dump(mode="json")
    assert gather(root, previous=previous, probes=[DependenciesProbe()]).meta.probes["dependencies"].reused
    # A file reached only through an include still invalidates the snapshot.
    (root / "deps/extra.txt").write_text("idna==3.7\n")
    again = gather(root, previous=previous, probes=[DependenciesProbe()])
    assert not again.meta.probes["dependencies"].reused
    assert again.dependencies["idna"][0].version == "3.7"


def test_unreadable_files_are_diagnostics_not_errors(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("six\n")
    (tmp_path / "package.json").write_bytes(b"\0binary")
    files = [FileRecord(path=p, size=1, sha=p) for p in ("requirements.txt", "package.json", "ghost/go.mod")]
    output = DependenciesProbe().run(ProbeContext(root=tmp_path, files=files))
    assert list(output.values["dependencies"]) == ["six"]
    assert [(d.level, d.file) for d in output.diagnostics] == [("info", "ghost/go.mod"), ("info", "package.json")]


def test_probe_declaration() -> None:
    probe = DependenciesProbe()
    assert (probe.name, probe.version, probe.produces, probe.applies_to_tasks) == (
        "dependencies", "5", ("dependencies",), ("vulnerability-remediation",))
    files = [FileRecord(path=p, size=1, sha="x") for p in (
        "a/requirements-dev.txt", "requirements/prod.in", "ci/upper-constraints.txt", "MANIFEST.in", "x/go.sum",
        "npm-shrinkwrap.json", "notes.txt", "src/config.h.in", "base-requirements.txt", "requirements/envs/ci.txt",
        "setup.cfg", "pkg/setup.py", "Pipfile", "Pipfile.lock", "tox.ini", "conda/environment-dev.yml",
        "docs/requirements.md")]
    matched = [f.path for f in ProbeContext(root=Path("."), files=files).matching(probe.inputs)]
    assert matched == ["a/requirements-dev.txt", "requirements/prod.in", "ci/upper-constraints.txt", "x/go.sum",
                       "npm-shrinkwrap.json", "base-requirements.txt", "requirements/envs/ci.txt", "setup.cfg",
                       "pkg/setup.py", "Pipfile", "Pipfile.lock", "tox.ini", "conda/environment-dev.yml"]
