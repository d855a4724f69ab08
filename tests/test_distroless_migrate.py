"""migrate_dockerfile on realistic Dockerfiles: the exact converted text and the reported decisions."""

from __future__ import annotations

from pathlib import Path

from repocontext.dockerfile import parse
from repocontext.model import ShellEvidence
from subgraphs.distroless_migration.migrate import migrate_dockerfile
from subgraphs.distroless_migration.models import DockerfileMigration, MigrationOptions, load_mapping, render

OPTIONS = MigrationOptions()


def migrate(tmp_path: Path, text: str, files: dict[str, str] | None = None,
            options: MigrationOptions = OPTIONS, **kwargs: object) -> DockerfileMigration:
    for rel, content in {**(files or {}), "Dockerfile": text}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(content)

    def read(rel: str) -> str | None:
        path = tmp_path / rel
        return path.read_text() if path.is_file() else None

    result = migrate_dockerfile("Dockerfile", (tmp_path / "Dockerfile").read_text(), options, read, **kwargs)
    assert parse(result.new_text, "Dockerfile").problems == []  # the output is a valid Dockerfile
    again = migrate_dockerfile("Dockerfile", text, options, read, **kwargs)
    assert again == result  # deterministic
    twice = migrate_dockerfile("Dockerfile", result.new_text, options, read, **kwargs)
    assert twice.new_text == result.new_text  # a migrated file is a fixed point
    return result


PY_SINGLE = """\
# syntax=docker/dockerfile:1
FROM python:3.11.4-slim-bookworm

ENV PYTHONUNBUFFERED=1 \\
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /app

# System packages needed to build psycopg2
RUN apt-get update \\
    && apt-get install -y --no-install-recommends \\
        build-essential \\
        libpq-dev \\
    && rm -rf /var/lib/apt/lists/*

COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt

COPY . .
EXPOSE 8000
CMD gunicorn --bind 0.0.0.0:8000 app:app
"""


def test_single_stage_debian_python_is_restructured_into_builder_and_shell_free_runtime(tmp_path: Path) -> None:
    m = migrate(tmp_path, PY_SINGLE)
    assert m.new_text == """\
# syntax=docker/dockerfile:1
FROM cgr.dev/chainguard/python:3.11-dev AS build
USER root

ENV PYTHONUNBUFFERED=1 \\
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /app

# System packages needed to build psycopg2
RUN apk add --no-cache \\
        build-base \\
        postgresql-dev

COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt

COPY . .
EXPOSE 8000
ENTRYPOINT []
CMD gunicorn --bind 0.0.0.0:8000 app:app

# Shell-free runtime: only what the build produced (no shell, no package manager).
FROM cgr.dev/chainguard/python:3.11
ENV PYTHONUNBUFFERED=1 \\
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /app
COPY --from=build /usr/lib/python3.11/site-packages /usr/lib/python3.11/site-packages
COPY --from=build /usr/lib/libpq.so.* /usr/lib/
COPY --from=build /usr/bin/gunicorn /usr/bin/gunicorn
COPY --from=build /app /app
EXPOSE 8000
ENTRYPOINT []
CMD ["gunicorn", "--bind", "0.0.0.0:8000", "app:app"]
"""
    assert m.changed
    builder, runtime = m.stages
    assert (builder.index, builder.name, builder.line, builder.old_image, builder.new_image) == (
        0, "build", 2, "python:3.11.4-slim-bookworm", "cgr.dev/chainguard/python:3.11-dev")
    assert builder.dev_variant and builder.user_root_added and not builder.added
    assert runtime.added and runtime.line == 23 and runtime.new_image == "cgr.dev/chainguard/python:3.11"
    assert not runtime.dev_variant and runtime.old_image is None
    assert [(p.manager, p.old, p.new, p.line) for p in m.packages] == [
        ("apt-get", "build-essential", ["build-base"], 11), ("apt-get", "libpq-dev", ["postgresql-dev"], 12)]
    assert m.unmapped == []
    r = m.runtime
    assert (r.stage, r.image, r.shell_free, r.restructured, r.blockers) == (
        0, "cgr.dev/chainguard/python:3.11", True, True, [])
    assert [(e.line, e.kind) for e in r.evidence] == [(9, "shell-form-run"), (16, "shell-form-run"),
                                                      (20, "shell-form-cmd")]
    assert str(r.evidence[2]) == "Dockerfile:20 shell-form-cmd CMD gunicorn --bind 0.0.0.0:8000 app:app"
    assert any("now runs as nonroot" in n for n in r.notes)
    assert m.notes == ["line 9: dropped `apt-get update` (apk add --no-cache needs none)",
                       "line 13: dropped `rm -rf /var/lib/apt/lists/*` (no apt/yum cache on Wolfi)"]


def test_node_on_ubuntu_moves_to_the_node_image(tmp_path: Path) -> None:
    text = """\
FROM ubuntu:22.04
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm git \\
 && rm -rf /var/lib/apt/lists/*
WORKDIR /srv/app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY . .
EXPOSE 3000
CMD ["node", "server.js"]
"""
    m = migrate(tmp_path, text)
    assert m.new_text == """\
FROM cgr.dev/chainguard/node:latest-dev AS build
USER root
ENV DEBIAN_FRONTEND=noninteractive
RUN apk add --no-cache git
WORKDIR /srv/app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY . .
EXPOSE 3000
ENTRYPOINT []
CMD ["node", "server.js"]

# Shell-free runtime: only what the build produced (no shell, no package manager).
FROM cgr.dev/chainguard/node:latest
WORKDIR /srv/app
COPY --from=build /srv/app /srv/app
EXPOSE 3000
ENTRYPOINT []
CMD ["node", "server.js"]
"""
    assert m.stages[0].notes[0] == "installs nodejs on a distro base: moved to the node image"
    assert [(p.old, p.new, p.note) for p in m.packages] == [
        ("nodejs", [], "provided by the node image"), ("npm", [], "provided by the node image"), ("git", ["git"], "")]
    assert not m.runtime.shell_free and m.runtime.restructured  # node's default image has busybox (catalog data)


GO = """\
# Build
FROM --platform=$BUILDPLATFORM golang:1.22.3 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/server ./cmd/server

# Run
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/server /server
USER nonroot:nonroot
ENTRYPOINT ["/server"]
"""


def test_multi_stage_go_with_a_distroless_final_keeps_it_shell_free(tmp_path: Path) -> None:
    m = migrate(tmp_path, GO)
    assert m.new_text == """\
# Build
FROM --platform=$BUILDPLATFORM cgr.dev/chainguard/go:1.22-dev AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/server ./cmd/server

# Run
FROM cgr.dev/chainguard/static:latest
COPY --from=build /out/server /server
USER nonroot:nonroot
ENTRYPOINT ["/server"]
"""
    assert [(s.new_image, s.dev_variant, s.user_root_added) for s in m.stages] == [
        ("cgr.dev/chainguard/go:1.22-dev", True, False), ("cgr.dev/chainguard/static:latest", False, False)]
    assert m.runtime.shell_free and not m.runtime.restructured and m.runtime.evidence == []
    assert m.runtime.image == "cgr.dev/chainguard/static:latest"


def test_python_multi_stage_with_a_venv_and_an_arg_parameterised_from(tmp_path: Path) -> None:
    text = """\
ARG PYTHON_IMAGE=python:3.12-slim
FROM ${PYTHON_IMAGE} AS builder
RUN python -m venv /opt/venv
ENV PATH="/opt/venv/bin:$PATH"
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt

FROM ${PYTHON_IMAGE}
COPY --from=builder /opt/venv /opt/venv
ENV PATH="/opt/venv/bin:$PATH"
WORKDIR /app
COPY src/ ./src/
CMD ["python", "-m", "src.app"]
"""
    m = migrate(tmp_path, text)
    assert m.new_text == """\
ARG PYTHON_IMAGE=cgr.dev/chainguard/python:3.12
FROM ${PYTHON_IMAGE}-dev AS builder
USER root
RUN python -m venv /opt/venv
ENV PATH="/opt/venv/bin:$PATH"
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt

FROM ${PYTHON_IMAGE}
COPY --from=builder /opt/venv /opt/venv
ENV PATH="/opt/venv/bin:$PATH"
WORKDIR /app
COPY src/ ./src/
ENTRYPOINT []
CMD ["python", "-m", "src.app"]
"""
    assert [(s.old_image, s.new_image, s.dev_variant) for s in m.stages] == [
        ("${PYTHON_IMAGE}", "${PYTHON_IMAGE}-dev", True), ("${PYTHON_IMAGE}", "${PYTHON_IMAGE}", False)]
    assert "ARG PYTHON_IMAGE default (line 1) mapped to cgr.dev/chainguard/python:3.12" in m.stages[0].note
    assert m.runtime.shell_free and not m.runtime.restructured
    assert m.runtime.image == "cgr.dev/chainguard/python:3.12"


def test_ubi_with_microdnf_and_useradd_is_restructured_with_its_accounts(tmp_path: Path) -> None:
    text = """\
FROM registry.access.redhat.com/ubi9/ubi-minimal:9.3
RUN microdnf install -y --nodocs python3.11 python3.11-pip gcc \\
    && microdnf clean all
RUN groupadd -r app && useradd -r -g app -u 1001 -d /app -m app
WORKDIR /app
COPY --chown=app:app . .
RUN pip3 install --no-cache-dir -r requirements.txt
USER app
CMD python3.11 -m app.main --port 8080
"""
    m = migrate(tmp_path, text)
    assert m.new_text == """\
FROM cgr.dev/chainguard/python:3.11-dev AS build
USER root
RUN apk add --no-cache gcc
RUN addgroup -S app && adduser -D -S -G app -u 1001 -h /app app
WORKDIR /app
COPY --chown=app:app . .
RUN pip3 install --no-cache-dir -r requirements.txt
USER app
ENTRYPOINT []
CMD python3.11 -m app.main --port 8080

# Shell-free runtime: only what the build produced (no shell, no package manager).
FROM cgr.dev/chainguard/python:3.11
WORKDIR /app
COPY --from=build /etc/passwd /etc/passwd
COPY --from=build /etc/group /etc/group
COPY --from=build /usr/lib/python3.11/site-packages /usr/lib/python3.11/site-packages
COPY --from=build /app /app
USER app
ENTRYPOINT []
CMD ["python3.11", "-m", "app.main", "--port", "8080"]
"""
    assert [(p.manager, p.old, p.new) for p in m.packages] == [
        ("microdnf", "python3.11", []), ("microdnf", "python3.11-pip", []), ("microdnf", "gcc", ["gcc"])]
    assert m.notes == ["line 3: dropped `microdnf clean` (apk add --no-cache needs none)"]
    assert m.runtime.shell_free and m.runtime.restructured


def test_dnf_on_ubi_without_a_python_version_keeps_dev_and_says_why(tmp_path: Path) -> None:
    text = """\
FROM registry.access.redhat.com/ubi9/ubi:9.3
RUN dnf install -y python3 python3-pip && dnf clean all && rm -rf /var/cache/dnf
COPY . /srv
RUN pip3 install -r /srv/requirements.txt
CMD ["python3", "/srv/main.py"]
"""
    m = migrate(tmp_path, text)
    assert m.new_text == """\
FROM cgr.dev/chainguard/python:latest-dev
USER root
COPY . /srv
RUN pip3 install -r /srv/requirements.txt
USER 65532
ENTRYPOINT []
CMD ["python3", "/srv/main.py"]
"""
    assert not m.runtime.shell_free and not m.runtime.restructured
    assert [(b.line, b.what) for b in m.runtime.blockers] == [
        (4, "pip installs into the system site-packages, but the Python version of python:latest is unknown")]
    assert m.runtime.blockers[0].how == "pin the image to python:3.X or use a virtualenv"


def test_alpine_final_whose_packages_every_image_has_becomes_static(tmp_path: Path) -> None:
    text = """\
FROM golang:1.21-alpine AS build
RUN apk add --no-cache git
WORKDIR /src
COPY . .
RUN CGO_ENABLED=0 go build -o /bin/app .

FROM alpine:3.19
RUN apk add --no-cache ca-certificates tzdata
COPY --from=build /bin/app /usr/local/bin/app
ENTRYPOINT ["app"]
"""
    m = migrate(tmp_path, text)
    assert m.new_text == """\
FROM cgr.dev/chainguard/go:1.21-dev AS build
RUN apk add --no-cache git
WORKDIR /src
COPY . .
RUN CGO_ENABLED=0 go build -o /bin/app .

FROM cgr.dev/chainguard/static:latest
COPY --from=build /bin/app /usr/local/bin/app
ENTRYPOINT ["/usr/local/bin/app"]
"""
    assert [(p.manager, p.old, p.new, p.note) for p in m.packages] == [
        ("apk", "git", ["git"], ""),
        ("apk", "ca-certificates", ["ca-certificates"], ""),
        ("apk", "tzdata", ["tzdata"], "")]
    assert m.stages[1].notes == ["distro base docker.io/library/alpine:3.19: its version is not kept"]
    assert "line 8: RUN dropped: it only installs packages the final image already has (ca-certificates, tzdata; "\
           "Chainguard catalog data)" \
        in m.notes
    assert m.runtime.shell_free and m.runtime.image == "cgr.dev/chainguard/static:latest"


def test_alpine_final_installing_a_runtime_package_stays_on_wolfi_base(tmp_path: Path) -> None:
    text = "FROM alpine:3.19\nRUN apk add --no-cache ffmpeg\nCOPY convert /usr/bin/convert\nENTRYPOINT [\"convert\"]\n"
    m = migrate(tmp_path, text)
    assert m.new_text == ("FROM cgr.dev/chainguard/wolfi-base:latest\nRUN apk add --no-cache ffmpeg\n"
                          "COPY convert /usr/bin/convert\nENTRYPOINT [\"convert\"]\n")
    assert not m.stages[0].user_root_added  # wolfi-base runs as root
    assert [(b.line, b.what) for b in m.runtime.blockers] == [
        (2, "package ffmpeg is installed in the final image; a shell-free runtime cannot install it")]
    assert m.runtime.image == "cgr.dev/chainguard/wolfi-base:latest" and not m.runtime.shell_free


def test_arg_in_the_tag_platform_and_digest(tmp_path: Path) -> None:
    digest = "sha256:" + "0123456789abcdef" * 4
    text = f"""\
ARG NODE_VERSION=18.19.0
FROM --platform=linux/amd64 node:${{NODE_VERSION}}-alpine3.19@{digest} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev

FROM --platform=linux/amd64 node:18.19.0-alpine3.19@{digest}
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY . .
USER node
CMD ["node", "index.js"]
"""
    m = migrate(tmp_path, text)
    # The first FROM stays parameterised (it used to be written out from the default: --build-arg was lost);
    # the second names its version itself.
    assert m.new_text == """\
ARG NODE_VERSION=18.19
FROM --platform=linux/amd64 cgr.dev/chainguard/node:${NODE_VERSION}-dev AS deps
USER root
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev

FROM --platform=linux/amd64 cgr.dev/chainguard/node:18.19
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY . .
USER node
ENTRYPOINT []
CMD ["node", "index.js"]
"""
    assert m.stages[0].notes == [
        "tag 18.19.0-alpine3.19 → 18.19: Chainguard tags carry the major.minor version only",
        "ARG NODE_VERSION default (line 1) mapped to 18.19",
        "tag suffix '-alpine3.19' dropped (Chainguard images have no such variants)",
        "--build-arg NODE_VERSION=<version> keeps working for versions cgr.dev/chainguard/node publishes as tags "
        "(e.g. 18.19); values with a variant suffix no longer exist there",
        "digest sha256:0123456789ab… dropped: it pinned the old image (pin the new one)"]
    assert m.stages[1].notes == ["tag 18.19.0-alpine3.19 → 18.19: Chainguard tags carry the major.minor version only",
                                 "digest sha256:0123456789ab… dropped: it pinned the old image (pin the new one)"]


def test_arg_without_default_is_reported_and_left_alone(tmp_path: Path) -> None:
    text = "ARG BASE\nFROM ${BASE}\nRUN apt-get install -y curl\nCMD [\"app\"]\n"
    m = migrate(tmp_path, text)
    assert m.new_text == text and not m.changed
    assert m.stages[0].notes == ["not migrated: the image depends on ARG BASE with no default"]
    assert [(b.line, b.how) for b in m.runtime.blockers] == [(2, "add the image to the mapping file's images:")]
    assert m.runtime.image is None and not m.runtime.shell_free


def test_heredoc_run_comments_continuations_and_unmapped_packages(tmp_path: Path) -> None:
    text = """\
from python:3.10-bookworm as deps
run <<EOF
set -eux
apt-get update
apt-get install -y --no-install-recommends libopencv-dev libxml2-dev
rm -rf /var/lib/apt/lists/*
EOF
RUN apt-get install -y \\
      # compilers
      gcc \\
      libfoo-dev \\
      # parsers
      libxslt1-dev=1.1.35-1 \\
      $EXTRA_PACKAGES
"""
    m = migrate(tmp_path, text)
    # Unmapped names stay in the apk line under a TODO (they used to be left out of it: dropped).
    todo = ("# TODO(planner): apt-get package {0} has no known Wolfi package; it is kept as written in the apk line, "
            "where apk fails unless Wolfi has that exact name. Fix: map {0} in the mapping file's packages: (to its "
            "Wolfi name, or [] if not needed)\n")
    variable = ("# TODO(planner): apt-get package list $EXTRA_PACKAGES is a variable or command substitution. Fix: "
                "name the packages in the Dockerfile (they are then mapped to Wolfi names)\n")
    assert m.new_text == f"""\
from cgr.dev/chainguard/python:3.10-dev as deps
user root
{todo.format("libopencv-dev")}run <<EOF
set -eux
apk add --no-cache libopencv-dev libxml2-dev
EOF
{todo.format("libfoo-dev")}{variable}RUN apk add --no-cache \\
      # compilers
      gcc \\
      libfoo-dev \\
      # parsers
      libxslt-dev \\
      $EXTRA_PACKAGES
user 65532
"""
    assert [(u.name, u.manager, u.line, u.reason) for u in m.unmapped] == [
        ("libopencv-dev", "apt-get", 5, "no Wolfi package known: kept as written"),
        ("libfoo-dev", "apt-get", 11, "no Wolfi package known: kept as written"),
        ("$EXTRA_PACKAGES", "apt-get", 14,
         "a variable or command substitution: its packages cannot be mapped, kept as written")]
    assert [(b.kind, b.file, b.line) for b in m.blockers] == [
        ("unmapped-package", "Dockerfile", 5), ("unmapped-package", "Dockerfile", 11),
        ("dynamic-package-list", "Dockerfile", 14)]
    assert m.blocked and not m.keep_unconverted
    assert [(p.old, p.new, p.line, p.note) for p in m.packages] == [
        ("libxml2-dev", ["libxml2-dev"], 5, ""), ("gcc", ["gcc"], 10, ""),
        ("libxslt1-dev", ["libxslt-dev"], 13, "version pin '1.1.35-1' dropped")]
    assert [(b.line, b.what) for b in m.runtime.blockers] == [
        (2, "the final stage sets no CMD or ENTRYPOINT: a restructured runtime would only run the base image's "
            "default (/usr/bin/python)"),
        (5, "package libopencv-dev has no known Wolfi name, so its role is unknown"),
        (11, "package libfoo-dev has no known Wolfi name, so its role is unknown"),
        (14, "package list $EXTRA_PACKAGES is a variable: what it installs is unknown")]
    assert m.runtime.image == "cgr.dev/chainguard/python:3.10-dev" and not m.runtime.shell_free


def test_entrypoint_shell_script_is_a_blocker_and_the_final_stage_stays_dev(tmp_path: Path) -> None:
    text = """\
FROM python:3.12-slim
RUN apt-get update && apt-get install -y --no-install-recommends curl && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
COPY app/ ./app/
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["gunicorn", "app.wsgi:application"]
"""
    script = "#!/bin/sh\nset -e\npython -m app.migrate\nexec \"$@\"\n"
    m = migrate(tmp_path, text, {"docker-entrypoint.sh": script})
    assert m.new_text == """\
FROM cgr.dev/chainguard/python:3.12-dev
USER root
RUN apk add --no-cache curl
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
USER 65532
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
COPY app/ ./app/
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["gunicorn", "app.wsgi:application"]
"""
    r = m.runtime
    assert not r.shell_free and not r.restructured and r.image == "cgr.dev/chainguard/python:3.12-dev"
    assert [(b.file, b.line, b.what, b.how) for b in r.blockers] == [(
        "Dockerfile", 2, "package curl is installed in the final image; a shell-free runtime cannot install it",
        "if only the build needs curl, list it under build_only: in the mapping file; otherwise keep the -dev "
        "final stage"), (  # no RUN runs curl: it is there for the entrypoint script or a health check
        "Dockerfile", 8, "ENTRYPOINT runs docker-entrypoint.sh (docker-entrypoint.sh, #!/bin/sh)",
        "replace docker-entrypoint.sh with an exec-form ENTRYPOINT that runs the program directly "
        "(move its setup into build steps or the application)")]
    assert [(e.line, e.kind) for e in r.evidence] == [
        (2, "shell-form-run"), (5, "shell-form-run"), (6, "shell-script-copied"), (8, "entrypoint-script")]


def test_shell_form_cmd_with_a_variable_is_a_blocker(tmp_path: Path) -> None:
    text = "FROM node:20.11.1-bookworm-slim\nWORKDIR /app\nCOPY . .\nCMD node server.js --port $PORT\n"
    m = migrate(tmp_path, text)
    assert m.new_text == ("FROM cgr.dev/chainguard/node:20.11-dev\nWORKDIR /app\nCOPY . .\n"
                          "ENTRYPOINT []\nCMD node server.js --port $PORT\n")
    assert [(b.line, b.what) for b in m.runtime.blockers] == [
        (4, "CMD node server.js --port $PORT uses a variable or command substitution, which needs a shell")]


def test_shell_form_entrypoint_becomes_exec_and_its_ignored_cmd_goes(tmp_path: Path) -> None:
    text = """\
FROM eclipse-temurin:17-jre
WORKDIR /opt/app
COPY target/app.jar app.jar
HEALTHCHECK --interval=30s CMD java -version
ENTRYPOINT exec java -jar /opt/app/app.jar
CMD ["--spring.profiles.active=prod"]
"""
    m = migrate(tmp_path, text)
    assert m.new_text == """\
FROM cgr.dev/chainguard/jre:17
WORKDIR /opt/app
COPY target/app.jar app.jar
HEALTHCHECK --interval=30s CMD ["java", "-version"]
ENTRYPOINT ["java", "-jar", "/opt/app/app.jar"]
"""
    assert m.runtime.shell_free and m.runtime.blockers == []
    assert "line 6: CMD dropped: the shell-form ENTRYPOINT ignored it, the exec form would pass it as arguments" \
        in m.runtime.notes


def test_healthcheck_with_curl_blocks_a_shell_free_runtime(tmp_path: Path) -> None:
    text = ("FROM openjdk:21-jdk-slim\nCOPY app.jar /app.jar\nHEALTHCHECK CMD [\"curl\", \"-f\", \"http://x/\"]\n"
            "CMD [\"java\", \"-jar\", \"/app.jar\"]\n")
    m = migrate(tmp_path, text)
    assert m.new_text.startswith("FROM cgr.dev/chainguard/jdk:21-dev\n")
    assert [(b.line, b.what) for b in m.runtime.blockers] == [
        (3, "HEALTHCHECK runs curl, which the runtime image jre does not have")]


def test_user_mapping_file_overrides_images_and_packages(tmp_path: Path) -> None:
    (tmp_path / "mapping.yaml").write_text(
        "images:\n  mycorp/python-base: python\npackages:\n  libgdal-dev: gdal-dev\nbuild_only: [gdal-dev]\n")
    options = MigrationOptions(org="acme.example", mapping=load_mapping(tmp_path / "mapping.yaml"))
    text = """\
FROM mycorp/python-base:3.11.9
RUN apt-get update && apt-get install -y libgdal-dev
COPY app.py /srv/app.py
CMD ["python", "/srv/app.py"]
"""
    m = migrate(tmp_path, text, options=options)
    assert m.new_text == """\
FROM cgr.dev/acme.example/python:3.11-dev AS build
USER root
RUN apk add --no-cache gdal-dev
COPY app.py /srv/app.py
ENTRYPOINT []
CMD ["python", "/srv/app.py"]

# Shell-free runtime: only what the build produced (no shell, no package manager).
FROM cgr.dev/acme.example/python:3.11
COPY --from=build /srv/app.py /srv/app.py
ENTRYPOINT []
CMD ["python", "/srv/app.py"]
"""
    assert m.stages[0].notes[0] == "from the user mapping file"
    assert [(p.old, p.new) for p in m.packages] == [("libgdal-dev", ["gdal-dev"])]
    assert m.unmapped == [] and m.runtime.shell_free


def test_unknown_image_is_left_alone_and_reported(tmp_path: Path) -> None:
    text = "FROM registry.corp.example/base/app:1.2\nRUN apt-get install -y curl\nCMD [\"/app\"]\n"
    m = migrate(tmp_path, text)
    assert m.new_text == text and not m.changed and m.packages == []
    assert m.stages[0].notes[0].startswith("not migrated: registry.corp.example/base/app is not in the known "
                                           "catalog")


def test_scratch_final_and_deployment_evidence(tmp_path: Path) -> None:
    text = "FROM golang:1.22 AS build\nRUN go build -o /app .\nFROM scratch\nCOPY --from=build /app /app\n" \
           "ENTRYPOINT [\"/app\"]\n"
    m = migrate(tmp_path, text)
    assert m.new_text == ("FROM cgr.dev/chainguard/go:1.22-dev AS build\nRUN go build -o /app .\n"
                          "FROM scratch\nCOPY --from=build /app /app\nENTRYPOINT [\"/app\"]\n")
    assert m.stages[1].notes == ["scratch: unchanged"] and m.runtime.shell_free
    deployed = ShellEvidence(file="k8s/deploy.yaml", line=12, kind="deployment-shell-command", detail="sh -c ./run")
    text2 = "FROM python:3.12\nCOPY app.py /app.py\nCMD [\"python\", \"/app.py\"]\n"
    m2 = migrate(tmp_path, text2, deployment_evidence=[deployed])
    assert m2.new_text.startswith("FROM cgr.dev/chainguard/python:3.12-dev\n")
    assert [(b.file, b.line) for b in m2.runtime.blockers] == [("k8s/deploy.yaml", 12)]


def test_stage_reference_chain_is_restructured_as_a_whole(tmp_path: Path) -> None:
    text = """\
FROM python:3.12-slim AS base
ENV APP_HOME=/srv
FROM base
RUN python -m venv /venv && /venv/bin/pip install flask
COPY app.py /srv/app.py
CMD ["/venv/bin/python", "/srv/app.py"]
"""
    m = migrate(tmp_path, text)
    assert m.new_text == """\
FROM cgr.dev/chainguard/python:3.12-dev AS base
USER root
ENV APP_HOME=/srv
FROM base AS build
RUN python -m venv /venv && /venv/bin/pip install flask
COPY app.py /srv/app.py
ENTRYPOINT []
CMD ["/venv/bin/python", "/srv/app.py"]

# Shell-free runtime: only what the build produced (no shell, no package manager).
FROM cgr.dev/chainguard/python:3.12
ENV APP_HOME=/srv
COPY --from=build /venv /venv
COPY --from=build /srv/app.py /srv/app.py
ENTRYPOINT []
CMD ["/venv/bin/python", "/srv/app.py"]
"""
    assert [(s.name, s.notes[:1]) for s in m.stages[:2]] == [
        ("base", ["tag 3.12-slim → 3.12: Chainguard tags carry the major.minor version only"]),
        ("build", ["built FROM an earlier stage: unchanged"])]


def test_no_from_and_report(tmp_path: Path) -> None:
    m = migrate_dockerfile("Dockerfile", "# nothing\n", OPTIONS)
    assert m.new_text == "# nothing\n" and not m.changed and m.notes == ["line 1: no FROM instruction"]
    report = render(migrate(tmp_path, PY_SINGLE))
    assert report.startswith("## `Dockerfile`\n\n**changed** · `python:3.11.4-slim-bookworm` → "
                             "`cgr.dev/chainguard/python:3.11-dev`, + runtime `cgr.dev/chainguard/python:3.11`; "
                             "packages 2 mapped, 0 unmapped; final stage shell-free (restructured); 0 blockers\n")
    assert "| 0 | build | 2 | `python:3.11.4-slim-bookworm` | `cgr.dev/chainguard/python:3.11-dev` | yes | added |" \
        in report
    assert "`cgr.dev/chainguard/python:3.11`: **shell-free** (restructured" in report


def test_chainguard_dev_input_is_split_and_build_user_root_not_carried(tmp_path: Path) -> None:
    text = """\
FROM cgr.dev/chainguard/python:3.12-dev
USER root
RUN apk add --no-cache build-base
COPY . /app
RUN pip install --no-cache-dir /app
CMD ["python", "-m", "app"]
"""
    m = migrate(tmp_path, text)
    assert m.new_text == """\
FROM cgr.dev/chainguard/python:3.12-dev AS build
USER root
RUN apk add --no-cache build-base
COPY . /app
RUN pip install --no-cache-dir /app
ENTRYPOINT []
CMD ["python", "-m", "app"]

# Shell-free runtime: only what the build produced (no shell, no package manager).
FROM cgr.dev/chainguard/python:3.12
COPY --from=build /usr/lib/python3.12/site-packages /usr/lib/python3.12/site-packages
COPY --from=build /app /app
ENTRYPOINT []
CMD ["python", "-m", "app"]
"""
    assert not m.stages[0].user_root_added and m.stages[0].dev_variant
    assert m.runtime.shell_free and not any("nonroot" in n for n in m.runtime.notes)
