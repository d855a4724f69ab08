"""The containers probe end to end: gather on a real git repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from planner import service
from planner.config import Settings
from repocontext import dockerfile
from repocontext.dockerfile import render
from repocontext.gather import gather
from repocontext.globs import PathIndex
from repocontext.probe import ProbeContext
from repocontext.probes.containers import DOCKERFILE_GLOBS, ContainersProbe, is_dockerfile
from repocontext.store import RepoContextStore

DOCKERFILE = """\
# syntax=docker/dockerfile:1
ARG PY=3.12
FROM python:${PY}-slim-bookworm AS build
RUN apt-get update \\
    && apt-get install -y --no-install-recommends gcc=4:12.2.0-3 \\
    && rm -rf /var/lib/apt/lists/*
COPY requirements.txt .
RUN pip install --prefix=/install -r requirements.txt

FROM python:${PY}-slim-bookworm
COPY --from=build /install /usr/local
COPY docker/entrypoint /usr/local/bin/
WORKDIR /app
COPY app/ .
USER 10001
ENTRYPOINT ["entrypoint"]
CMD ["gunicorn", "app:app"]
"""

FILES = {
    "Dockerfile": DOCKERFILE,
    "docker/entrypoint": "#!/bin/bash\nset -e\nexec \"$@\"\n",
    "app/app.py": "app = None\n",
    "app/migrate.sh": "#!/bin/sh\necho migrate\n",
    "requirements.txt": "gunicorn==22.0.0\n",
    "worker/Containerfile.dev": "FROM alpine:3.19\nRUN apk add --no-cache bash\nCMD bash\nFROBNICATE\n",
    "compose.yaml": "services:\n  app:\n    build: .\n    image: acme/app:1\n",
    "deploy/k8s.yaml": "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n"
                       "      containers:\n        - name: app\n          image: acme/app:1\n",
    "deploy/values.yml": "replicas: 2\n",
}


def git_repo(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    env_args = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), *env_args, "commit", "-qm", "init"], check=True)
    return root


def test_is_dockerfile() -> None:
    assert all(is_dockerfile(p) for p in ("Dockerfile", "a/Containerfile", "x.Dockerfile", "x.dockerfile",
                                          "Dockerfile.prod", "Containerfile.dev"))
    assert not any(is_dockerfile(p) for p in ("Dockerfile-old", "docs/dockerfile.md", "Makefile"))
    paths = sorted(["Dockerfile", "a/Containerfile", "x.Dockerfile", "b/x.dockerfile", "Dockerfile.prod", ".Dockerfile",
                    "Dockerfile.", "Dockerfile-old", "docs/dockerfile.md", "Makefile", "c/Containerfile.dev"])
    index = PathIndex(paths)
    assert sorted({p for g in DOCKERFILE_GLOBS for p in index.match(g)}) == [p for p in paths if is_dockerfile(p)]


def test_gather_end_to_end(tmp_path: Path) -> None:
    root = git_repo(tmp_path, FILES)
    context = gather(root, probes=[ContainersProbe()])
    containers = context.containers
    assert [d.path for d in containers.dockerfiles] == ["Dockerfile", "worker/Containerfile.dev"]
    main = containers.dockerfiles[0]
    assert render(main) == DOCKERFILE
    build, final = main.stages
    assert final.base.resolved == "python:3.12-slim-bookworm" and final.depends_on == [0]
    assert [(p.manager, p.name, p.version, p.line, p.source_line) for p in build.packages] == [
        ("apt-get", "gcc", "4:12.2.0-3", 4, 5)]
    assert [(e.file, e.line, e.kind, e.script, e.shebang) for e in containers.shell_evidence] == [
        ("Dockerfile", 12, "shell-script-copied", "docker/entrypoint", "#!/bin/bash"),
        ("Dockerfile", 14, "shell-script-copied", "app/migrate.sh", "#!/bin/sh"),
        ("Dockerfile", 16, "entrypoint-script", "docker/entrypoint", "#!/bin/bash"),
        ("worker/Containerfile.dev", 2, "shell-form-run", None, None),
        ("worker/Containerfile.dev", 3, "shell-form-cmd", None, None),
    ]
    assert containers.deployment_manifests == ["compose.yaml", "deploy/k8s.yaml"]
    assert [(d.format, d.images) for d in containers.deployments] == [
        ("compose", ["acme/app:1"]), ("kubernetes", ["acme/app:1"])]
    assert [(d.probe, d.file, d.line, d.message) for d in context.diagnostics] == [
        ("containers", "worker/Containerfile.dev", 4, "unknown instruction 'FROBNICATE'")]
    assert context.meta.probes["containers"].version == "3"


def test_copied_file_changes_invalidate_the_previous_result(tmp_path: Path) -> None:
    root = git_repo(tmp_path, FILES)
    probe = ContainersProbe()
    first = gather(root, probes=[probe]).model_dump()
    again = gather(root, previous=first, probes=[probe])
    assert again.meta.probes["containers"].reused
    (root / "docker/entrypoint").write_text("#!/usr/bin/env python3\n")  # not *.sh: only the fingerprint sees it
    changed = gather(root, previous=first, probes=[probe])
    assert not changed.meta.probes["containers"].reused
    assert [e.shebang for e in changed.containers.shell_evidence if e.line == 16] == ["#!/usr/bin/env python3"]


def test_unreadable_dockerfile_is_a_diagnostic(tmp_path: Path) -> None:
    root = git_repo(tmp_path, {"Dockerfile": "FROM a\0\n"})  # binary content is never handed to a probe
    context = gather(root, probes=[ContainersProbe()])
    assert [d.path for d in context.containers.dockerfiles] == ["Dockerfile"]
    assert context.containers.dockerfiles[0].stages == []
    assert [(d.file, d.message) for d in context.diagnostics if d.probe == "containers"] == [
        ("Dockerfile", "not read (binary, too large or secret-looking)")]


def test_a_regather_reads_only_the_yaml_that_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Per-file results are kept between gathers: one changed manifest among many is the only YAML read again,
    no unchanged Dockerfile is parsed again (the fingerprint takes their parse from the probe cache), a
    changed one is parsed once, and the snapshot equals a full gather's."""
    many = {f"conf/c{i}.yaml": f"key: {i}\n" for i in range(40)}
    root = git_repo(tmp_path, {**FILES, **many})
    settings = Settings(home=tmp_path / "home")
    service.gather_repo(settings, root, warm=False)
    reads: list[str] = []
    parses: list[str] = []
    real_read, real_parse = ProbeContext.read_text, dockerfile.parse
    monkeypatch.setattr(ProbeContext, "read_text", lambda self, path: reads.append(path) or real_read(self, path))
    monkeypatch.setattr(dockerfile, "parse", lambda text, path: parses.append(path) or real_parse(text, path))
    (root / "deploy/k8s.yaml").write_text(FILES["deploy/k8s.yaml"].replace("acme/app:1", "acme/app:2"))
    subprocess.run(["git", "-C", str(root), "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qam", "bump"],
                   check=True)
    service.gather_repo(settings, root, warm=False)
    assert [p for p in reads if p.endswith((".yaml", ".yml"))] == ["deploy/k8s.yaml"]
    assert parses == []  # both Dockerfiles unchanged
    (root / "Dockerfile").write_text(FILES["Dockerfile"] + "USER 1000\n")
    subprocess.run(["git", "-C", str(root), "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qam", "user"],
                   check=True)
    service.gather_repo(settings, root, warm=False)
    assert parses == ["Dockerfile"]  # the changed one, once (fingerprint and analysis share it)
    stored = RepoContextStore(settings.home).load(root)
    assert stored is not None
    assert stored.containers == gather(root).containers
    assert [d.images for d in stored.containers.deployments if d.format == "kubernetes"] == [["acme/app:2"]]
