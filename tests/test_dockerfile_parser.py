"""Realistic Dockerfiles: exact parsed structure, and the byte-for-byte round trip on every one."""

from __future__ import annotations

from pathlib import Path

import pytest

from repocontext.dockerfile import parse, render
from repocontext.model import Dockerfile, Stage

DIGEST = "sha256:" + "0123456789abcdef" * 4

DEBIAN_PYTHON = """\
# syntax=docker/dockerfile:1.7
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \\
    PYTHONUNBUFFERED=1
RUN apt-get update \\
    && apt-get install -y --no-install-recommends \\
        build-essential \\
        libpq-dev=15.6-0+deb12u1 \\
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
USER 1000:1000
EXPOSE 8000/tcp
CMD ["gunicorn", "--bind", "0.0.0.0:8000", "app:app"]
"""

NODE_UBUNTU = """\
FROM ubuntu:22.04
ARG NODE_MAJOR=20
ENV DEBIAN_FRONTEND noninteractive
RUN apt-get update && apt-get install -y curl ca-certificates gnupg \\
 && curl -fsSL https://deb.nodesource.com/setup_${NODE_MAJOR}.x | bash - \\
 && apt-get install -y nodejs \\
 && apt-get clean
WORKDIR /usr/src/app
COPY package*.json ./
RUN npm ci --omit=dev
COPY . .
EXPOSE 3000
CMD npm start
"""

GO_DISTROLESS = """\
FROM --platform=$BUILDPLATFORM golang:1.22-alpine AS builder
ARG TARGETOS TARGETARCH
WORKDIR /src
RUN --mount=type=cache,target=/go/pkg/mod \\
    --mount=type=bind,source=go.sum,target=go.sum \\
    go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -o /out/server ./cmd/server

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=builder /out/server /server
USER nonroot:nonroot
ENTRYPOINT ["/server"]
"""

PYTHON_VENV = """\
FROM python:3.12-slim AS build
RUN python -m venv /opt/venv
ENV PATH="/opt/venv/bin:$PATH"
COPY requirements.txt .
RUN pip install -r requirements.txt

FROM python:3.12-slim AS runtime
COPY --from=build /opt/venv /opt/venv
ENV PATH="/opt/venv/bin:$PATH"
COPY --chown=app:app src/ /app/
WORKDIR /app
ENTRYPOINT ["python", "-m", "app"]
"""

UBI = """\
FROM registry.access.redhat.com/ubi9/ubi:9.3 AS build
RUN dnf install -y --setopt=install_weak_deps=False gcc make && dnf clean all
FROM registry.access.redhat.com/ubi9/ubi-minimal:9.3
RUN microdnf install -y --nodocs shadow-utils tzdata && microdnf clean all
USER 1001
CMD ["/usr/bin/app"]
"""

ALPINE = """\
FROM alpine:3.19
RUN apk add --no-cache ca-certificates=20240226-r0 tzdata \\
    && apk add --no-cache --virtual .build-deps gcc musl-dev
COPY docker-entrypoint.sh /usr/local/bin/
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["serve"]
"""

ARG_FROM = """\
ARG REGISTRY=docker.io
ARG PYTHON_VERSION=3.12
ARG VARIANT
ARG BASE=${REGISTRY}/library/python:${PYTHON_VERSION}-slim
FROM ${BASE} AS base
FROM python:${PYTHON_VERSION}-${VARIANT:-bookworm} AS defaulted
FROM python:${PYTHON_VERSION}-$VARIANT
ARG PYTHON_VERSION
"""

PLATFORM_DIGEST = f"""\
FROM --platform=linux/amd64 nginx:1.25.3@{DIGEST}
FROM ghcr.io/org/app@{DIGEST}
FROM localhost:5000/team/app:dev
FROM scratch
"""

HEREDOC = """\
# syntax=docker/dockerfile:1.4
FROM debian:bookworm-slim
RUN <<EOF
set -eux
apt-get update
apt-get install -y --no-install-recommends curl
rm -rf /var/lib/apt/lists/*
EOF
COPY <<-"EOT" /etc/motd
\tWelcome $USER
\tEOT
RUN <<one cat > /tmp/a && <<two sh
first
one
apk add jq
two
"""

COMMENTS_IN_CONTINUATION = """\
FROM debian:12
# install tools
RUN apt-get update && apt-get install -y \\
    # the HTTP client
    curl \\

    # version control
    git=1:2.39.2-1.1 \\
    && true
"""

ESCAPE_BACKTICK = (
    "# escape=`\r\n"
    "\r\n"
    "FROM mcr.microsoft.com/windows/servercore:ltsc2022\r\n"
    "RUN powershell -Command `\r\n"
    "    # comment\r\n"
    "    Write-Host C:\\temp\r\n"
    "WORKDIR C:\\app\r\n"
)

LOWER_CASE = """\
from node:20-bookworm-slim as Deps
workdir /app
copy package.json .
run npm install
From deps
Cmd ["node", "server.js"]"""

FIXTURES = {
    "debian-python": DEBIAN_PYTHON, "node-ubuntu": NODE_UBUNTU, "go-distroless": GO_DISTROLESS,
    "python-venv": PYTHON_VENV, "ubi": UBI, "alpine": ALPINE, "arg-from": ARG_FROM,
    "platform-digest": PLATFORM_DIGEST, "heredoc": HEREDOC, "comments": COMMENTS_IN_CONTINUATION,
    "escape": ESCAPE_BACKTICK, "lower-case": LOWER_CASE,
}


def parsed(tmp_path: Path, text: str) -> tuple[Dockerfile, list[tuple[int, str]]]:
    path = tmp_path / "Dockerfile"
    path.write_bytes(text.encode())
    result = parse(path.read_bytes().decode(), "Dockerfile")
    return result.dockerfile, result.problems


def shape(stage: Stage) -> list[tuple[int, int, str, str]]:
    return [(i.line, i.end_line, i.keyword_raw, i.form) for i in stage.instructions]


def pkgs(stage: Stage) -> list[tuple[str, str, str | None, int, int]]:
    return [(p.manager, p.name, p.version, p.line, p.source_line) for p in stage.packages]


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_round_trip_is_byte_for_byte(tmp_path: Path, name: str) -> None:
    text = FIXTURES[name]
    dockerfile, _ = parsed(tmp_path, text)
    assert render(dockerfile).encode() == text.encode()
    covered = sorted([(t.line, t.line) for t in dockerfile.trivia]
                     + [(i.line, i.end_line) for i in dockerfile.preamble]
                     + [(i.line, i.end_line) for s in dockerfile.stages for i in s.instructions])
    lines = [n for start, end in covered for n in range(start, end + 1)]
    assert lines == list(range(1, text.count("\n") + (0 if text.endswith("\n") else 1) + 1))


@pytest.mark.parametrize("name", sorted(set(FIXTURES) - {"escape"}))
def test_fixtures_parse_without_problems(tmp_path: Path, name: str) -> None:
    assert parsed(tmp_path, FIXTURES[name])[1] == []


def test_debian_python_single_stage(tmp_path: Path) -> None:
    dockerfile, _ = parsed(tmp_path, DEBIAN_PYTHON)
    assert dockerfile.directives == {"syntax": "docker/dockerfile:1.7"}
    assert [(t.line, t.kind) for t in dockerfile.trivia] == [(1, "directive"), (3, "blank")]
    (stage,) = dockerfile.stages
    assert shape(stage) == [(2, 2, "FROM", "none"), (4, 5, "ENV", "none"), (6, 10, "RUN", "shell"),
                            (11, 11, "WORKDIR", "none"), (12, 12, "COPY", "none"), (13, 13, "RUN", "shell"),
                            (14, 14, "COPY", "none"), (15, 15, "USER", "none"), (16, 16, "EXPOSE", "none"),
                            (17, 17, "CMD", "exec")]
    assert stage.base.model_dump(exclude_defaults=True) == {
        "raw": "python:3.11-slim-bookworm", "registry": "docker.io", "name": "python", "tag": "3.11-slim-bookworm",
        "resolved": "python:3.11-slim-bookworm", "repository": "docker.io/library/python",
        "normalized": "docker.io/library/python:3.11-slim-bookworm"}
    assert stage.env == {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
    assert pkgs(stage) == [("apt-get", "build-essential", None, 6, 8),
                           ("apt-get", "libpq-dev", "15.6-0+deb12u1", 6, 9)]
    assert (stage.user, stage.workdir, stage.expose) == ("1000:1000", "/app", ["8000/tcp"])
    assert stage.cmd is not None and stage.cmd.args == ["gunicorn", "--bind", "0.0.0.0:8000", "app:app"]
    assert stage.entrypoint is None and dockerfile.final_stage == 0
    run = stage.instructions[2]
    assert run.raw == "".join(DEBIAN_PYTHON.splitlines(keepends=True)[5:10])
    assert run.value.startswith("apt-get update     && apt-get install")


def test_node_on_ubuntu(tmp_path: Path) -> None:
    (stage,) = parsed(tmp_path, NODE_UBUNTU)[0].stages
    assert stage.base.normalized == "docker.io/library/ubuntu:22.04"
    assert stage.args == {"NODE_MAJOR": "20"}
    assert stage.env == {"DEBIAN_FRONTEND": "noninteractive"}
    assert pkgs(stage) == [("apt-get", "curl", None, 4, 4), ("apt-get", "ca-certificates", None, 4, 4),
                           ("apt-get", "gnupg", None, 4, 4), ("apt-get", "nodejs", None, 4, 6)]
    assert stage.cmd is not None
    assert (stage.cmd.form, stage.cmd.args) == ("shell", ["/bin/sh", "-c", "npm start"])
    assert stage.expose == ["3000"]


def test_go_multi_stage_with_distroless_final(tmp_path: Path) -> None:
    dockerfile, _ = parsed(tmp_path, GO_DISTROLESS)
    build, final = dockerfile.stages
    assert (build.name, build.platform, build.base.normalized) == (
        "builder", "$BUILDPLATFORM", "docker.io/library/golang:1.22-alpine")
    run = build.instructions[3]
    assert [(f.name, f.value) for f in run.flags] == [
        ("mount", "type=cache,target=/go/pkg/mod"), ("mount", "type=bind,source=go.sum,target=go.sum")]
    assert run.value == "go mod download" and (run.line, run.end_line) == (4, 6)
    assert build.args == {"TARGETOS": None, "TARGETARCH": None}
    assert final.base.model_dump(include={"registry", "name", "tag", "repository"}) == {
        "registry": "gcr.io", "name": "distroless/static-debian12", "tag": "nonroot",
        "repository": "gcr.io/distroless/static-debian12"}
    assert final.depends_on == [0] and final.user == "nonroot:nonroot"
    assert final.entrypoint is not None and final.entrypoint.args == ["/server"]
    assert [(f.name, f.value) for f in final.instructions[1].flags] == [("from", "builder")]
    assert dockerfile.final_stage == 1 and dockerfile.trivia[0].kind == "blank"


def test_python_multi_stage_venv(tmp_path: Path) -> None:
    build, runtime = parsed(tmp_path, PYTHON_VENV)[0].stages
    assert build.env == {"PATH": "/opt/venv/bin:$PATH"}
    assert runtime.name == "runtime" and runtime.depends_on == [0]
    assert [(f.name, f.value) for f in runtime.instructions[3].flags] == [("chown", "app:app")]
    assert runtime.workdir == "/app" and runtime.packages == []
    assert runtime.entrypoint is not None and runtime.entrypoint.args == ["python", "-m", "app"]


def test_ubi_with_dnf_and_microdnf(tmp_path: Path) -> None:
    build, final = parsed(tmp_path, UBI)[0].stages
    assert build.base.registry == "registry.access.redhat.com" and build.base.name == "ubi9/ubi"
    assert pkgs(build) == [("dnf", "gcc", None, 2, 2), ("dnf", "make", None, 2, 2)]
    assert pkgs(final) == [("microdnf", "shadow-utils", None, 4, 4), ("microdnf", "tzdata", None, 4, 4)]
    assert final.base.repository == "registry.access.redhat.com/ubi9/ubi-minimal"


def test_alpine_with_apk(tmp_path: Path) -> None:
    (stage,) = parsed(tmp_path, ALPINE)[0].stages
    assert pkgs(stage) == [("apk", "ca-certificates", "20240226-r0", 2, 2), ("apk", "tzdata", None, 2, 2),
                           ("apk", "gcc", None, 2, 3), ("apk", "musl-dev", None, 2, 3)]
    assert stage.entrypoint is not None and stage.cmd is not None
    assert (stage.entrypoint.args, stage.cmd.args) == (["docker-entrypoint.sh"], ["serve"])


def test_arg_parameterised_from(tmp_path: Path) -> None:
    dockerfile, _ = parsed(tmp_path, ARG_FROM)
    assert dockerfile.global_args == {"REGISTRY": "docker.io", "PYTHON_VERSION": "3.12", "VARIANT": None,
                                      "BASE": "docker.io/library/python:3.12-slim"}
    assert [i.keyword for i in dockerfile.preamble] == ["ARG"] * 4
    first, second, third = dockerfile.stages
    assert (first.base.raw, first.base.resolved) == ("${BASE}", "docker.io/library/python:3.12-slim")
    assert (first.base.registry, first.base.name, first.base.repository) == (
        "docker.io", "library/python", "docker.io/library/python")
    assert second.base.resolved == "python:3.12-bookworm" and second.base.tag == "3.12-bookworm"
    assert third.base.model_dump(exclude_defaults=True) == {"raw": "python:${PYTHON_VERSION}-$VARIANT",
                                                            "unresolved_args": ["VARIANT"]}
    assert third.args == {"PYTHON_VERSION": "3.12"}  # a bare ARG in a stage takes the global default


def test_platform_digests_registries_and_scratch(tmp_path: Path) -> None:
    nginx, ghcr, local, scratch = parsed(tmp_path, PLATFORM_DIGEST)[0].stages
    assert (nginx.platform, nginx.base.tag, nginx.base.digest) == ("linux/amd64", "1.25.3", DIGEST)
    assert nginx.base.normalized == f"docker.io/library/nginx:1.25.3@{DIGEST}"
    assert (ghcr.base.registry, ghcr.base.name, ghcr.base.tag) == ("ghcr.io", "org/app", None)
    assert ghcr.base.normalized == f"ghcr.io/org/app@{DIGEST}"
    assert (local.base.registry, local.base.name, local.base.tag) == ("localhost:5000", "team/app", "dev")
    assert scratch.base.scratch and scratch.base.registry is None and scratch.base.name == "scratch"


def test_heredocs(tmp_path: Path) -> None:
    (stage,) = parsed(tmp_path, HEREDOC)[0].stages
    assert shape(stage) == [(2, 2, "FROM", "none"), (3, 8, "RUN", "shell"), (9, 11, "COPY", "none"),
                            (12, 16, "RUN", "shell")]
    run, copy, double = stage.instructions[1:]
    assert [(d.name, d.line, d.end_line, d.chomp, d.expand) for d in run.heredocs] == [("EOF", 4, 8, False, True)]
    assert run.heredocs[0].content.splitlines()[1] == "apt-get update"
    assert [(d.name, d.chomp, d.expand, d.content) for d in copy.heredocs] == [
        ("EOT", True, False, "\tWelcome $USER\n")]
    assert [(d.name, d.line, d.end_line) for d in double.heredocs] == [("one", 13, 14), ("two", 15, 16)]
    assert pkgs(stage) == [("apt-get", "curl", None, 3, 6), ("apk", "jq", None, 12, 15)]


def test_comment_and_blank_lines_inside_a_continuation(tmp_path: Path) -> None:
    dockerfile, _ = parsed(tmp_path, COMMENTS_IN_CONTINUATION)
    run = dockerfile.stages[0].instructions[1]
    assert (run.line, run.end_line) == (3, 9)
    assert run.value == "apt-get update && apt-get install -y     curl     git=1:2.39.2-1.1     && true"
    assert [(t.line, t.kind) for t in dockerfile.trivia] == [(2, "comment")]
    assert pkgs(dockerfile.stages[0]) == [("apt-get", "curl", None, 3, 5), ("apt-get", "git", "1:2.39.2-1.1", 3, 8)]


def test_escape_directive_backtick_and_crlf(tmp_path: Path) -> None:
    dockerfile, problems = parsed(tmp_path, ESCAPE_BACKTICK)
    assert problems == []
    assert dockerfile.escape == "`" and dockerfile.directives == {"escape": "`"}
    (stage,) = dockerfile.stages
    run, workdir = stage.instructions[1:]
    assert (run.line, run.end_line, run.value) == (4, 6, "powershell -Command     Write-Host C:\\temp")
    assert run.raw == "RUN powershell -Command `\r\n    # comment\r\n    Write-Host C:\\temp\r\n"
    assert workdir.value == "C:\\app"


def test_lower_case_instructions_keep_their_case(tmp_path: Path) -> None:
    dockerfile, _ = parsed(tmp_path, LOWER_CASE)
    deps, final = dockerfile.stages
    assert [(i.keyword_raw, i.keyword) for i in deps.instructions] == [
        ("from", "FROM"), ("workdir", "WORKDIR"), ("copy", "COPY"), ("run", "RUN")]
    assert deps.name == "deps"
    assert final.base.stage_ref and final.base.stage_index == 0 and final.depends_on == [0]
    assert final.workdir == "/app"  # inherited from the stage it is built from
    assert final.cmd is not None and final.cmd.args == ["node", "server.js"]
    assert final.instructions[-1].raw == 'Cmd ["node", "server.js"]'


def test_problems_are_reported_with_lines_not_raised(tmp_path: Path) -> None:
    text = "RUN echo too early\nFROM Bad/Name\nFROBNICATE x\nCMD [1, 2]\nRUN <<EOF\nnever ends\n"
    dockerfile, problems = parsed(tmp_path, text)
    assert problems == [(1, "RUN before the first FROM (only ARG is allowed)"),
                        (2, "FROM: invalid repository name 'Name' (lower-case letters, digits and separators only)"
                            " in 'Bad/Name'"),
                        (3, "unknown instruction 'FROBNICATE'"),
                        (4, "CMD: JSON array with non-string items (Docker rejects it)"),
                        (5, "unterminated heredoc 'EOF'")]
    assert render(dockerfile) == text
    assert dockerfile.stages[0].instructions[-1].end_line == 6


def test_empty_and_comment_only_files(tmp_path: Path) -> None:
    for text in ("", "# nothing\n\n"):
        dockerfile, problems = parsed(tmp_path, text)
        assert dockerfile.stages == [] and problems == [(1, "no FROM instruction")]
        assert render(dockerfile) == text
