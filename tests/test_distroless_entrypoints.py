"""ENTRYPOINT [] only where CMD starts with the program itself; every stage with its own CMD (build targets)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_distroless_migrate import migrate

from subgraphs.distroless_migration.commands import is_argument


@pytest.mark.parametrize(("word", "language", "argument"), [
    ("index.js", "node", True), ("dist/server.mjs", "node", True), ("--inspect", "node", True),
    ("npm", "node", False), ("node", "node", False), ("/app/bin/server", "node", False),
    ("app.py", "python", True), ("-m", "python", True), ("gunicorn", "python", False),
    ("app.jar", "java", True), ("com.example.Main", "java", True), ("java", "java", False),
    ("server.js", "python", False),  # not a python script: a program as far as python's image goes
])
def test_is_argument(word: str, language: str, argument: bool) -> None:
    assert is_argument(word, language) is argument


def test_node_cmd_of_a_script_stays_on_the_node_entrypoint(tmp_path: Path) -> None:
    text = """\
FROM node:20-bookworm-slim
WORKDIR /usr/src/app
COPY package.json package-lock.json ./
COPY index.js ./
CMD ["index.js"]
"""
    m = migrate(tmp_path, text)
    assert "ENTRYPOINT" not in m.new_text  # node's docker-entrypoint.sh ran `node index.js`; Chainguard's node does
    # node's default image carries busybox (catalog data): no package manager, but not shell-free
    assert m.new_text.startswith("FROM cgr.dev/chainguard/node:20\n") and not m.runtime.shell_free
    assert any("lists busybox in it: it keeps a shell" in n for n in m.runtime.notes)
    assert any("CMD starts with index.js, an argument" in n and "docker-entrypoint.sh" in n for n in m.runtime.notes)


def test_node_cmd_of_a_program_clears_the_entrypoint(tmp_path: Path) -> None:
    text = "FROM node:20\nWORKDIR /app\nCOPY . .\nCMD [\"node\", \"--enable-source-maps\", \"dist/main.js\"]\n"
    m = migrate(tmp_path, text)
    assert 'ENTRYPOINT []\nCMD ["node", "--enable-source-maps", "dist/main.js"]\n' in m.new_text


COMPOSE_TARGETS = """\
# syntax=docker/dockerfile:1.4
FROM --platform=$BUILDPLATFORM python:3.10-alpine AS builder
WORKDIR /src
COPY requirements.txt /src
RUN pip3 install -r requirements.txt
COPY . .
CMD ["python3", "server.py"]

FROM builder AS dev-envs
RUN <<EOF
apk update
apk add git
EOF
CMD ["python3", "server.py"]
"""


def test_a_build_target_stage_gets_its_entrypoint_and_children_inherit_it(tmp_path: Path) -> None:
    m = migrate(tmp_path, COMPOSE_TARGETS)
    # compose builds `target: builder`: its CMD would otherwise run as `python python3 server.py`
    assert 'COPY . .\nENTRYPOINT []\nCMD ["python3", "server.py"]\n\nFROM builder AS dev-envs' in m.new_text
    dev_envs = m.new_text.split("FROM builder AS dev-envs")[1].split("# Shell-free runtime")[0]
    assert "ENTRYPOINT" not in dev_envs  # it inherits the cleared ENTRYPOINT (its runtime stage sets its own)
    assert any("ENTRYPOINT [] added before CMD" in n for n in m.stages[0].notes)


def test_a_child_with_a_script_cmd_gets_the_entrypoint_back(tmp_path: Path) -> None:
    text = """\
FROM node:20 AS base
WORKDIR /app
COPY . .
CMD ["npm", "start"]

FROM base AS worker
CMD ["worker.js"]

FROM base
CMD ["npm", "run", "serve"]
"""
    m = migrate(tmp_path, text)
    assert 'ENTRYPOINT []\nCMD ["npm", "start"]' in m.new_text
    assert 'FROM base AS worker\nENTRYPOINT ["/usr/bin/node"]\nCMD ["worker.js"]' in m.new_text
    assert 'FROM base\nCMD ["npm", "run", "serve"]' in m.new_text  # inherits the cleared ENTRYPOINT


def test_distroless_sources(tmp_path: Path) -> None:
    java = "FROM gcr.io/distroless/java17-debian12\nCOPY target/app.jar /app/app.jar\nWORKDIR /app\nCMD [\"app.jar\"]\n"
    m = migrate(tmp_path, java)
    assert m.new_text == ("FROM cgr.dev/chainguard/jre:17\nCOPY target/app.jar /app/app.jar\nWORKDIR /app\n"
                          'ENTRYPOINT ["java", "-jar"]\nCMD ["app.jar"]\n')
    python = "FROM gcr.io/distroless/python3-debian12\nCOPY main.py /app/\nCMD [\"/app/main.py\"]\n"
    assert "ENTRYPOINT" not in migrate(tmp_path, python).new_text


def test_an_explicit_entrypoint_is_left_alone(tmp_path: Path) -> None:
    text = "FROM python:3.12-slim AS builder\nENTRYPOINT [\"python3\"]\nCMD [\"app.py\"]\nFROM builder\n"
    assert migrate(tmp_path, text).new_text.count("ENTRYPOINT") == 1


def test_rust_target_stage(tmp_path: Path) -> None:
    text = "FROM rust:1.77 AS development\nWORKDIR /code\nCOPY . .\nRUN cargo fetch\nCMD [\"cargo\", \"run\"]\n" \
           "FROM debian:bookworm-slim\nCOPY --from=development /code/target/release/app /app\nCMD [\"/app\"]\n"
    m = migrate(tmp_path, text)
    assert 'ENTRYPOINT []\nCMD ["cargo", "run"]' in m.new_text  # Chainguard rust's ENTRYPOINT is rustc
    # the final stage copies a program built on (glibc) Wolfi: glibc-dynamic, not static
    assert "FROM cgr.dev/chainguard/glibc-dynamic:latest\n" in m.new_text
