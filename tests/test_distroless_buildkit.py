"""BuildKit features kept or adapted, Dockerfile file names, and the limits of a shell-free restructure."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_distroless_migrate import migrate

from repocontext.probes.containers import is_dockerfile

CACHED = """\
# syntax=docker/dockerfile:1.6
FROM --platform=$BUILDPLATFORM python:3.12-slim AS build
RUN rm -f /etc/apt/apt.conf.d/docker-clean
RUN --mount=type=cache,target=/var/cache/apt,sharing=locked \\
    --mount=type=cache,target=/var/lib/apt,sharing=locked \\
    --mount=type=cache,target=/root/.cache/pip \\
    apt-get update && apt-get install -y --no-install-recommends gcc libpq-dev
RUN <<EOF
set -e
useradd --create-home app
usermod -aG staff app
EOF
"""


def test_syntax_directive_cache_mounts_heredocs_and_platform(tmp_path: Path) -> None:
    m = migrate(tmp_path, CACHED)
    assert m.new_text == """\
# syntax=docker/dockerfile:1.6
FROM --platform=$BUILDPLATFORM cgr.dev/chainguard/python:3.12-dev AS build
USER root
RUN --mount=type=cache,target=/var/cache/apk,sharing=locked \\
    --mount=type=cache,target=/root/.cache/pip \\
    apk add --no-cache gcc postgresql-dev
RUN <<EOF
set -e
adduser -D app
addgroup app staff
EOF
USER 65532
"""
    assert m.blockers == []
    assert "line 3: `rm -f /etc/apt/apt.conf.d/docker-clean` configures apt/dpkg, which Wolfi does not have: removed" \
        in m.notes
    assert any("cache mount /var/cache/apt → /var/cache/apk" in n for n in m.notes)
    assert any("cache mount of /var/lib/apt removed" in n for n in m.notes)


@pytest.mark.parametrize(("path", "found"), [
    ("Dockerfile", True), ("svc/Dockerfile.prod", True), ("api.Dockerfile", True), ("Containerfile", True),
    ("build/Containerfile.dev", True), ("Dockerfile-old.txt", False), ("docs/dockerfile.md", False),
])
def test_dockerfile_names(path: str, found: bool) -> None:
    assert is_dockerfile(path) is found


def test_no_restructure_without_a_command(tmp_path: Path) -> None:
    text = "FROM python:3.12\nCOPY . /app\nRUN pip install /app\n"
    m = migrate(tmp_path, text)
    assert not m.runtime.restructured and m.runtime.image == "cgr.dev/chainguard/python:3.12-dev"
    assert [b.what for b in m.runtime.blockers] == [
        "the final stage sets no CMD or ENTRYPOINT: a restructured runtime would only run the base image's default "
        "(/usr/bin/python)"]


def test_no_restructure_when_run_outputs_would_be_lost(tmp_path: Path) -> None:
    text = """\
FROM node:20-bookworm-slim
WORKDIR /app
COPY package*.json ./
RUN npm ci --omit=dev && npm install -g pm2
RUN curl -fsSL -o /usr/local/bin/wait-for https://example.com/wait-for
RUN echo "ready" > /etc/app-ready
COPY . .
CMD ["pm2-runtime", "server.js"]
"""
    m = migrate(tmp_path, text)
    assert not m.runtime.restructured and m.runtime.image == "cgr.dev/chainguard/node:20-dev"
    whats = [(b.line, b.what) for b in m.runtime.blockers]
    assert (4, "`npm install -g pm2` installs outside the copied paths; a shell-free runtime would lack it") in whats
    assert (5, "`curl -fsSL -o /usr/local/bin/wait-for` writes /usr/local/bin/wait-for, which the runtime does not "
               "copy") in whats
    assert (6, "`> /etc/app-ready` writes /etc/app-ready, which the runtime does not copy") in whats


def test_restructure_keeps_what_builds_into_copied_paths(tmp_path: Path) -> None:
    text = """\
FROM node:20
WORKDIR /srv
COPY . .
RUN npm ci && npm run build && mkdir -p /srv/data && rm -rf /srv/tests
CMD ["node", "dist/index.js"]
"""
    m = migrate(tmp_path, text)
    assert m.runtime.restructured and m.runtime.blockers == []
