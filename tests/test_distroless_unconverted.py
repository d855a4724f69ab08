"""Never drop silently: what cannot be converted stays under a TODO and blocks the item (real-looking files)."""

from __future__ import annotations

from pathlib import Path

from test_distroless_migrate import migrate

from repocontext.dockerfile import parse
from repocontext.dockerfile.shellwords import commands, tokenize
from subgraphs.distroless_migration.models import MigrationOptions
from subgraphs.distroless_migration.shell import classify, pipelines


def kinds(text: str, tmp_path: Path, **kwargs: object) -> list[tuple[str, int]]:
    return [(b.kind, b.line) for b in migrate(tmp_path, text, **kwargs).blockers]


def test_pipelines_are_judged_whole() -> None:
    cmds = commands(tokenize("set -e && curl -fsSL https://get.example.sh | sudo -E bash - && echo ok"))
    assert pipelines(cmds) == [[0], [1, 2], [3]]
    verdict = classify([cmds[1], cmds[2]])
    assert verdict is not None and verdict.action == "block" and "remote installer" in verdict.message
    assert classify([cmds[0]]) is None and classify([cmds[3]]) is None
    python = commands(tokenize("curl -sSL https://install.python-poetry.org | python3 -"))
    assert classify(python) is not None
    substituted = commands(tokenize('sh -c "$(wget -qO- https://x.example/install.sh)"'))
    assert classify(substituted) is not None


XARGS = """\
FROM python:3.12-slim
WORKDIR /app
COPY packages.txt .
RUN apt-get update && cat packages.txt | xargs apt-get install -y --no-install-recommends \\
    && rm -rf /var/lib/apt/lists/*
COPY . .
CMD ["python", "-m", "app"]
"""


def test_xargs_apt_get_stays_whole_and_blocks(tmp_path: Path) -> None:
    m = migrate(tmp_path, XARGS, {"packages.txt": "libgdal-dev\n"})
    run = "RUN cat packages.txt | xargs apt-get install -y --no-install-recommends\n"
    assert run in m.new_text  # the pipeline is never cut: update/cleanup go, the install stays whole
    assert [(b.kind, b.line) for b in m.blockers] == [("dynamic-package-list", 4)]
    assert "packages.txt" in m.blockers[0].message and "apk add" in m.blockers[0].fix
    assert "# TODO(planner): `cat packages.txt | xargs apt-get install -y --no-install-recommends` installs" \
        in m.new_text
    assert m.blocked and not m.runtime.shell_free


DEBIAN_TOOLS = """\
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends locales ca-certificates curl \\
    && locale-gen en_US.UTF-8 \\
    && update-alternatives --install /usr/bin/python python /usr/bin/python3 1
COPY vendor/tool_1.2_amd64.deb /tmp/
RUN dpkg -i /tmp/tool_1.2_amd64.deb
RUN curl -fsSL https://example.com/install.sh | bash
CMD ["/usr/bin/tool"]
"""


def test_debian_only_tools_and_installers_are_each_a_blocker(tmp_path: Path) -> None:
    m = migrate(tmp_path, DEBIAN_TOOLS, {"vendor/tool_1.2_amd64.deb": "binary"})
    assert [(b.kind, b.line) for b in m.blockers] == [
        ("unconverted-command", 3), ("unconverted-command", 4), ("unconverted-command", 6),
        ("unconverted-command", 7)]
    messages = [b.message for b in m.blockers]
    assert "locale-gen" in messages[0] and "glibc-locales" in m.blockers[0].fix
    assert "update-alternatives" in messages[1]
    assert "dpkg" in messages[2] and "remote installer" in messages[3]
    for kept in ("locale-gen en_US.UTF-8", "update-alternatives --install", "RUN dpkg -i /tmp/tool_1.2_amd64.deb",
                 "RUN curl -fsSL https://example.com/install.sh | bash"):
        assert kept in m.new_text  # kept as written, never dropped
    assert "apk add --no-cache glibc-locales" in m.new_text and m.new_text.count("# TODO(planner):") == 4


DOCKER_REPO = """\
FROM ubuntu:22.04
RUN apt-get update && apt-get install -y ca-certificates curl gnupg \\
    && install -m 0755 -d /etc/apt/keyrings \\
    && curl -fsSL https://download.docker.com/linux/ubuntu/gpg | gpg --dearmor -o /etc/apt/keyrings/docker.gpg \\
    && echo "deb [signed-by=/etc/apt/keyrings/docker.gpg] https://download.docker.com/linux/ubuntu jammy stable" \\
        > /etc/apt/sources.list.d/docker.list \\
    && apt-get update && apt-get install -y docker-ce-cli
ENTRYPOINT ["docker"]
"""


def test_repository_setup_for_packages_wolfi_lacks_is_a_blocker(tmp_path: Path) -> None:
    m = migrate(tmp_path, DOCKER_REPO)
    assert [(b.kind, b.line) for b in m.blockers] == [
        ("unconverted-command", 3), ("unconverted-command", 4), ("unconverted-command", 5),
        ("unmapped-package", 7)]
    assert all("repository" in b.message for b in m.blockers[:3])
    assert "docker-ce-cli" in m.blockers[3].message
    assert "gpg --dearmor -o /etc/apt/keyrings/docker.gpg" in m.new_text and "docker-ce-cli" in m.new_text


PPA = """\
FROM ubuntu:22.04
RUN apt-get update && apt-get install -y software-properties-common \\
    && add-apt-repository -y ppa:deadsnakes/ppa \\
    && apt-get update && apt-get install -y python3.11 python3.11-venv
COPY . /srv
RUN python3.11 -m venv /venv && /venv/bin/pip install -r /srv/requirements.txt
CMD ["/venv/bin/python", "/srv/main.py"]
"""


def test_repository_setup_for_packages_wolfi_has_is_removed_with_a_note(tmp_path: Path) -> None:
    m = migrate(tmp_path, PPA, {"requirements.txt": "flask\n"})
    assert m.blockers == [] and not m.blocked
    assert "add-apt-repository" not in m.new_text
    assert m.new_text.startswith("FROM cgr.dev/chainguard/python:3.11-dev AS build\nUSER root\n"
                                 "COPY . /srv\n")
    assert any("add-apt-repository -y ppa:deadsnakes/ppa` sets up a package repository or its signing key: removed"
               in n for n in m.notes)


NODESOURCE = """\
FROM debian:bookworm
RUN apt-get update && apt-get install -y curl \\
    && curl -fsSL https://deb.nodesource.com/setup_20.x | bash - \\
    && apt-get install -y nodejs
WORKDIR /app
COPY . .
RUN npm ci
CMD ["node", "server.js"]
"""


def test_nodesource_setup_goes_when_wolfi_has_nodejs(tmp_path: Path) -> None:
    m = migrate(tmp_path, NODESOURCE)
    assert m.blockers == []
    assert "nodesource" not in m.new_text and "RUN apk add --no-cache curl\n" in m.new_text
    assert m.stages[0].new_image == "cgr.dev/chainguard/node:20-dev" and m.runtime.restructured
    assert "node version 20 kept from the pin at line 2: NodeSource setup_20.x" in m.stages[0].notes
    assert any("NodeSource package repository: removed" in n for n in m.notes)


def test_apt_configuration_is_removed_with_a_note(tmp_path: Path) -> None:
    text = """\
FROM debian:bookworm-slim
RUN echo 'tzdata tzdata/Areas select Etc' | debconf-set-selections \\
    && rm -f /etc/apt/apt.conf.d/docker-clean \\
    && apt-get update && apt-get install -y --no-install-recommends tzdata jq
ENTRYPOINT ["jq"]
"""
    m = migrate(tmp_path, text)
    assert m.blockers == []
    assert "RUN apk add --no-cache tzdata jq\n" in m.new_text
    assert any("debconf-set-selections` configures apt/dpkg" in n for n in m.notes)
    assert any("/etc/apt/apt.conf.d/docker-clean` configures apt/dpkg" in n for n in m.notes)


def test_keep_unconverted_keeps_the_same_text_and_does_not_block(tmp_path: Path) -> None:
    blocked = migrate(tmp_path, DEBIAN_TOOLS, {"vendor/tool_1.2_amd64.deb": "binary"})
    kept = migrate(tmp_path, DEBIAN_TOOLS, {"vendor/tool_1.2_amd64.deb": "binary"},
                   options=MigrationOptions(keep_unconverted=True))
    assert kept.new_text == blocked.new_text and kept.blockers == blocked.blockers
    assert blocked.blocked and not kept.blocked and kept.keep_unconverted
    assert parse(kept.new_text, "Dockerfile").problems == []


def test_exec_form_install_is_not_rewritten_and_blocks(tmp_path: Path) -> None:
    text = 'FROM python:3.12\nRUN ["apt-get", "install", "-y", "libpq-dev"]\nCMD ["python", "-m", "app"]\n'
    m = migrate(tmp_path, text)
    assert [(b.kind, b.line) for b in m.blockers] == [("not-rewritten", 2)]
    assert 'RUN ["apt-get", "install", "-y", "libpq-dev"]' in m.new_text
    assert "# TODO(planner): exec-form RUN: not rewritten: its apt-get install (libpq-dev) stays as written" \
        in m.new_text


def test_env_prefixed_install_is_converted(tmp_path: Path) -> None:
    text = "FROM debian:12\nRUN env DEBIAN_FRONTEND=noninteractive apt-get install -y -q curl\nCMD [\"curl\"]\n"
    assert "RUN apk add --no-cache curl\n" in migrate(tmp_path, text).new_text
