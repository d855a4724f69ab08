"""What kind of file a path is, for `policy.file_kinds`.

The RepoContext knows best (its manifests, lockfiles, Dockerfiles and deployment files, found by
content and by the includes that name them); names decide the rest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from repocontext.deps.files import file_kind
from repocontext.globs import match

# Checked in order: the first kind whose globs match wins.
BY_NAME: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("compose", ("docker-compose*.yml", "docker-compose*.yaml", "compose.yml", "compose.yaml", "compose.*.y*ml")),
    ("ci", (".github/workflows/**", ".gitlab-ci.yml", ".circleci/**", "Jenkinsfile", "azure-pipelines.yml")),
    ("kubernetes", ("k8s/**/*.y*ml", "kubernetes/**/*.y*ml", "helm/**", "charts/**")),
    ("test", ("test_*.py", "*_test.py", "**/tests/**", "**/test/**", "*.test.*", "*.spec.*", "*_test.go")),
    ("docs", ("*.md", "*.rst", "docs/**", "LICENSE*", "CHANGELOG*")),
    ("source", ("*.py", "*.js", "*.mjs", "*.cjs", "*.ts", "*.tsx", "*.jsx", "*.go", "*.java", "*.kt", "*.rb",
                "*.rs", "*.c", "*.h", "*.cc", "*.cpp", "*.cs", "*.php", "*.sh", "*.swift", "*.scala")),
    ("config", ("*.yml", "*.yaml", "*.toml", "*.ini", "*.cfg", "*.json", "*.conf", ".env.example")),
)
_DOCKERFILE = re.compile(r"(?i)(^|[._-])(docker|container)file($|[._-])")


def facts(context: Mapping[str, Any] | None) -> dict[str, str]:
    """path → kind, from a (lazy) RepoContext; empty without one."""
    if not context:
        return {}
    known: dict[str, str] = {}
    manifests = context.get("manifests") or {}
    for group in ("manifests", "lockfiles"):
        for record in manifests.get(group) or []:
            known[record["path"]] = record.get("kind") or group.rstrip("s")
    containers = context.get("containers") or {}
    for record in containers.get("dockerfiles") or []:
        known[record["path"]] = "dockerfile"
    for record in containers.get("deployments") or []:
        known[record["path"]] = record.get("format") or "config"
    return known


def kind_of(path: str, known: Mapping[str, str] | None = None) -> str:
    if known and path in known:
        return known[path]
    name = path.rpartition("/")[2]
    named = file_kind(path)  # the one list of manifest and lockfile names (repocontext/deps/files.py)
    if named is not None:
        return named
    if _DOCKERFILE.search(name):
        return "dockerfile"
    for kind, patterns in BY_NAME:
        if any(match(pattern, path) for pattern in patterns):
            return kind
    return "other"
