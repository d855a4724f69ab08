"""Source base images → Chainguard images."""

from __future__ import annotations

from pathlib import Path

import pytest

from repocontext.dockerfile import parse
from repocontext.model import BaseImage
from subgraphs.distroless_migration import options_from
from subgraphs.distroless_migration.images import ImageChoice, Unmapped, cut_version, java_for, map_base
from subgraphs.distroless_migration.models import MigrationOptions, UserMapping

OPTIONS = MigrationOptions()


def base(text: str) -> BaseImage:
    return parse(text if text.startswith("ARG") else f"FROM {text}\n", "Dockerfile").dockerfile.stages[-1].base


def cut(source: str, kept: str, java: bool = False) -> tuple[str]:
    return (f"tag {source} → {kept}: Chainguard tags carry the {'major' if java else 'major.minor'} version only",)


@pytest.mark.parametrize(("image", "name", "tag", "kind", "notes"), [
    ("python:3.11.4-slim-bookworm", "python", "3.11", "language", cut("3.11.4-slim-bookworm", "3.11")),
    ("node:20-alpine", "node", "20", "language", cut("20-alpine", "20")),
    ("golang:1.22.3", "go", "1.22", "language", cut("1.22.3", "1.22")),
    ("docker.io/library/ruby:3.2.2-slim", "ruby", "3.2", "language", cut("3.2.2-slim", "3.2")),
    ("eclipse-temurin:17-jre", "jre", "17", "language", cut("17-jre", "17", java=True)),
    ("openjdk:17.0.2-jdk-slim", "jdk", "17", "language", cut("17.0.2-jdk-slim", "17", java=True)),
    ("amazoncorretto:21", "jdk", "21", "language", ()),
    ("python", "python", "latest", "language", ()),
    ("node:lts-slim", "node", "latest", "language", ("tag 'lts-slim' has no version: mapped to latest",)),
    ("nginx:1.25-alpine@sha256:" + "ab" * 32, "nginx", "1.25", "language", (
        "tag 1.25-alpine → 1.25: Chainguard tags carry the major.minor version only",
        "Chainguard nginx runs as nonroot (its default server listens on 8080): a config that listens on 80 needs "
        "Docker's default unprivileged-port sysctl (not given on Kubernetes)",)),
    ("debian:bookworm-slim", "wolfi-base", "latest", "distro",
     ("distro base docker.io/library/debian:bookworm-slim: its version is not kept",)),
    ("registry.access.redhat.com/ubi9/ubi-minimal:9.3", "wolfi-base", "latest", "distro",
     ("distro base registry.access.redhat.com/ubi9/ubi-minimal:9.3: its version is not kept",)),
    ("quay.io/centos/centos:stream9", "wolfi-base", "latest", "distro",
     ("distro base quay.io/centos/centos:stream9: its version is not kept",)),
    ("gcr.io/distroless/static-debian12:nonroot", "static", "latest", "distroless",
     ("gcr.io/distroless image: Chainguard images run as nonroot by default",)),
    ("gcr.io/distroless/base-debian12", "glibc-dynamic", "latest", "distroless", ()),
    ("gcr.io/distroless/python3-debian12", "python", "latest", "distroless", ()),
    ("gcr.io/distroless/nodejs20-debian12", "node", "20", "distroless", ()),
    ("gcr.io/distroless/java17-debian12", "jre", "17", "distroless", ()),
    ("cgr.dev/chainguard/python:3.12-dev", "python", "3.12", "chainguard", ()),
    ("cgr.dev/acme.example/python:3.12", "cgr.dev/acme.example/python", "3.12", "chainguard", ()),
])
def test_builtin_mapping(image: str, name: str, tag: str, kind: str, notes: tuple[str, ...]) -> None:
    choice = map_base(base(image), OPTIONS)
    assert isinstance(choice, ImageChoice)
    assert (choice.name, choice.tag, choice.kind, choice.notes) == (name, tag, kind, notes)


def test_references_and_variants() -> None:
    python = map_base(base("python:3.11"), OPTIONS)
    assert isinstance(python, ImageChoice)
    assert python.reference(OPTIONS, dev=True) == "cgr.dev/chainguard/python:3.11-dev"
    assert python.reference(MigrationOptions(registry="r.example", org="o"), dev=False) == "r.example/o/python:3.11"
    assert python.info.entrypoint == "/usr/bin/python"
    distro = map_base(base("ubuntu:22.04"), OPTIONS)
    assert isinstance(distro, ImageChoice)
    assert distro.reference(OPTIONS, dev=True) == "cgr.dev/chainguard/wolfi-base:latest"  # no -dev variant
    debug = map_base(base("gcr.io/distroless/static-debian12:debug"), OPTIONS)
    assert isinstance(debug, ImageChoice) and debug.debug
    jre = map_base(base("eclipse-temurin:21-jre"), OPTIONS)
    assert isinstance(jre, ImageChoice)
    assert java_for(jre, builds=True).name == "jdk" and java_for(jre, builds=False).name == "jre"
    assert java_for(python, builds=False) is python


def test_unmapped_images_say_why() -> None:
    unknown = map_base(base("registry.corp.example/team/app:1"), OPTIONS)
    assert isinstance(unknown, Unmapped) and unknown.reason.startswith(
        "registry.corp.example/team/app is not in the known catalog") and "--input mapping=FILE" in unknown.reason
    no_default = map_base(base("ARG IMG\nFROM ${IMG}\n"), OPTIONS)
    assert isinstance(no_default, Unmapped)
    assert no_default.reason == "the image depends on ARG IMG with no default"
    assert isinstance(map_base(base("gcr.io/distroless/unknown-thing"), OPTIONS), Unmapped)


def test_user_mapping_overrides_and_adds() -> None:
    options = MigrationOptions(mapping=UserMapping(images={
        "python": "registry.example.com/hardened/python:3.11", "mycorp/base": "wolfi-base",
        "ghcr.io/acme/jdk": "jdk"}))
    fixed = map_base(base("python:3.9-slim"), options)
    assert isinstance(fixed, ImageChoice)
    assert fixed.reference(options, dev=True) == "registry.example.com/hardened/python:3.11"  # the tag is fixed
    added = map_base(base("mycorp/base:2024.1"), options)
    assert isinstance(added, ImageChoice) and (added.name, added.tag, added.kind) == ("wolfi-base", "latest", "user")
    java = map_base(base("ghcr.io/acme/jdk:17.0.9"), options)
    assert isinstance(java, ImageChoice) and java.tag == "17"
    assert java.notes == ("from the user mapping file", *cut("17.0.9", "17", java=True))


def test_cut_version() -> None:
    assert [cut_version(t) for t in ("3.11.4-slim", "20", "v1.2.3", "slim", None)] == ["3.11", "20", "1.2", None, None]
    assert cut_version("17.0.2_8-jre", major_only=True) == "17"


def test_catalog_aliases_and_shipped_mappings() -> None:
    mongo = map_base(base("mongo:5"), OPTIONS)
    assert isinstance(mongo, ImageChoice) and (mongo.name, mongo.tag) == ("mongodb", "5")
    assert "lists mongodb as the equivalent of mongo" in mongo.notes[0]
    assert any("tag 5 is not among the public catalog data's tags" in n for n in mongo.notes)
    for source, image in (("mcr.microsoft.com/dotnet/sdk:7.0", "dotnet-sdk"), ("envoyproxy/envoy:v1.29", "envoy"),
                          ("apache/kafka:3.7.0", "kafka"), ("opensearchproject/opensearch:2", "opensearch"),
                          ("mcr.microsoft.com/dotnet/runtime-deps:8.0", "dotnet-runtime-deps")):
        choice = map_base(base(source), OPTIONS)
        assert isinstance(choice, ImageChoice) and choice.name == image
        assert "not in the public catalog" in choice.notes[0]


def test_a_mapping_on_the_task_class_path_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path
    (folder / "distroless-mapping.yaml").write_text("images:\n  tiangolo/uvicorn-gunicorn-fastapi: python\n")
    monkeypatch.setenv("PLANNER_TASK_CLASS_PATH", str(folder))
    options = options_from({})
    assert options.mapping.images == {"tiangolo/uvicorn-gunicorn-fastapi": "python"}
    choice = map_base(base("tiangolo/uvicorn-gunicorn-fastapi:python3.9"), options)
    assert isinstance(choice, ImageChoice) and choice.name == "python"
