"""ARG-parameterised FROMs stay parameterised; invalid digests are dropped with a note."""

from __future__ import annotations

from pathlib import Path

from test_distroless_migrate import migrate

from subgraphs.distroless_migration.stages import tag_template

PY_ARG = """\
ARG PYTHON_VERSION=3.11
FROM python:${PYTHON_VERSION}-slim
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
CMD ["python", "-m", "app"]
"""


def test_tag_template() -> None:
    template = tag_template("python:${PYTHON_VERSION}-slim")
    assert template is not None and (template.name, template.repository, template.suffix) == (
        "PYTHON_VERSION", "python", "-slim")
    assert tag_template("golang:$GO_VERSION") is not None
    assert tag_template("${REGISTRY}/python:3.12") is None
    assert tag_template("python:3.${MINOR}") is None
    assert tag_template("node:${A}-${B}") is None


def test_a_version_arg_keeps_selecting_the_image(tmp_path: Path) -> None:
    m = migrate(tmp_path, PY_ARG, {"requirements.txt": "flask\n"})
    assert m.new_text.startswith("ARG PYTHON_VERSION=3.11\n"
                                 "FROM cgr.dev/chainguard/python:${PYTHON_VERSION}-dev AS build\nUSER root\n")
    assert "\nFROM cgr.dev/chainguard/python:${PYTHON_VERSION}\n" in m.new_text  # the runtime stage too
    assert "COPY --from=build /usr/lib/python3.11/site-packages" in m.new_text and m.runtime.restructured
    notes = m.stages[0].notes
    assert "tag suffix '-slim' dropped (Chainguard images have no such variants)" in notes
    assert ("--build-arg PYTHON_VERSION=<version> keeps working for versions cgr.dev/chainguard/python publishes "
            "as tags (e.g. 3.11); values with a variant suffix no longer exist there") in notes


def test_the_default_is_cut_like_any_tag_and_java_keeps_the_major(tmp_path: Path) -> None:
    text = """\
ARG GO_VERSION=1.22.3
ARG JAVA_VERSION=21.0.2
FROM golang:${GO_VERSION}-bookworm AS tools
RUN go install github.com/example/tool@v1.0.0
FROM eclipse-temurin:${JAVA_VERSION}-jre
COPY --from=tools /go/bin/tool /usr/local/bin/tool
COPY app.jar /app.jar
CMD ["java", "-jar", "/app.jar"]
"""
    m = migrate(tmp_path, text)
    assert m.new_text.startswith("ARG GO_VERSION=1.22\nARG JAVA_VERSION=21\n"
                                 "FROM cgr.dev/chainguard/go:${GO_VERSION}-dev AS tools\nRUN go install")
    assert "FROM cgr.dev/chainguard/jre:${JAVA_VERSION}\n" in m.new_text
    assert "ARG GO_VERSION default (line 1) mapped to 1.22" in m.stages[0].notes
    assert any("<major version>" in n for n in m.stages[1].notes)


def test_an_arg_that_cannot_select_a_chainguard_image_is_written_out_and_said(tmp_path: Path) -> None:
    text = """\
ARG REGISTRY=docker.io
ARG NODE=lts
FROM ${REGISTRY}/library/python:3.12 AS py
RUN pip install build
FROM node:${NODE}
COPY server.js /app/
CMD ["node", "/app/server.js"]
"""
    m = migrate(tmp_path, text)
    assert "FROM cgr.dev/chainguard/python:3.12-dev AS py\n" in m.new_text
    assert "FROM cgr.dev/chainguard/node:latest\n" in m.new_text
    assert m.new_text.startswith("ARG REGISTRY=docker.io\nARG NODE=lts\n")  # defaults untouched
    assert m.stages[0].notes[-1] == ("FROM used ARG REGISTRY: written out from the default (--build-arg REGISTRY no "
                                     "longer changes this FROM)")
    assert any("ARG NODE (default 'lts') cannot select a Chainguard tag" in n for n in m.stages[1].notes)


def test_an_invalid_digest_is_dropped_with_a_note(tmp_path: Path) -> None:
    text = "FROM python:3.12-slim@sha256:abc123\nCOPY app.py /app/\nCMD [\"python\", \"/app/app.py\"]\n"
    m = migrate(tmp_path, text)
    assert m.new_text.startswith("FROM cgr.dev/chainguard/python:3.12\n") and m.changed
    assert m.stages[0].notes == ["tag 3.12-slim → 3.12: Chainguard tags carry the major.minor version only",
                                 "invalid digest in 'python:3.12-slim@sha256:abc123' dropped (not a well-formed "
                                 "digest): mapped by name and tag"]
    assert not any("invalid digest" in n for n in m.notes)  # not a parse problem any more: the recipe takes it
