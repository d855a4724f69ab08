"""The build probe finds by name exactly the files `classify` accepts."""

from __future__ import annotations

from pathlib import Path

from repocontext.model import FileRecord
from repocontext.probe import ProbeContext
from repocontext.probes.build import build_files, classify

PATHS = sorted([
    "pyproject.toml", "svc/package.json", "svc/package-lock.json", "requirements.txt", "requirements-dev.in",
    "reqs/requirements/base.txt", "requirements/extra.txt", "requirements/notes.md", "constraints.txt",
    "constraints-ci.txt", "go.mod", "go.sum", "a/b/Makefile", "Gemfile.lock", "src/app.py", "docs/requirements.md",
    "my-requirements.txt", "requirementsXtxt", "poetry.lock", "tools/CMakeLists.txt", "README.md",
])


def test_build_files_are_exactly_the_classified_ones(tmp_path: Path) -> None:
    files = [FileRecord(path=p, size=1, sha="0" * 40, language=None) for p in PATHS]
    ctx = ProbeContext(root=tmp_path, files=files)
    assert [p for p, _ in build_files(ctx)] == [p for p in PATHS if classify(p)]
    assert "requirements/extra.txt" in dict(build_files(ctx)) and "my-requirements.txt" not in dict(build_files(ctx))
