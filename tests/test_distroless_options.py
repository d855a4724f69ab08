"""The user mapping file: tables, and one-line errors naming file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from subgraphs.distroless_migration.models import MappingError, MigrationOptions, load_mapping, parse_mapping


def test_load_mapping_reads_all_three_tables(tmp_path: Path) -> None:
    path = tmp_path / "chainguard.yaml"
    path.write_text("images:\n  mycorp/base: wolfi-base:latest\n  python: python\n"
                    "packages:\n  libfoo-dev: foo-dev\n  libbar: [bar, bar-utils]\n  apt-utils: []\n"
                    "build_only:\n  - protobuf-dev\n")
    mapping = load_mapping(path)
    assert mapping.images == {"mycorp/base": "wolfi-base:latest", "python": "python"}
    assert mapping.packages == {"libfoo-dev": ["foo-dev"], "libbar": ["bar", "bar-utils"], "apt-utils": []}
    assert mapping.build_only == ["protobuf-dev"] and mapping.source == str(path)
    assert parse_mapping("", "empty.yaml").images == {}


@pytest.mark.parametrize(("text", "message"), [
    ("images: [python]\n", "m.yaml:1: images: expected a mapping"),
    ("images:\n  python: 3\n", "m.yaml:2: images.python: expected an image name, got '3'"),
    ("images:\n  python: Not An Image\n", "m.yaml:2: images.python: expected an image name, got 'Not An Image'"),
    ("packages:\n  a: {b: c}\n", "m.yaml:2: packages.a: expected a package name or a list of names, got 'mapping'"),
    ("packages:\n  a: [ok, 'bad name']\n", "m.yaml:2: packages.a[1]: expected a package name, got 'bad name'"),
    ("build_only: 5\n", "m.yaml:1: build_only: expected a package name or a list of names, got '5'"),
    ("image:\n  a: b\n", "m.yaml:1: image: unknown field (allowed: images, packages, build_only)"),
    ("images:\n  a: b\n  a: c\n", "m.yaml:3: images.a: duplicate key"),
    ("- a\n", "m.yaml:1: mapping: expected a mapping"),
    ("images: [\n", "m.yaml:2: invalid YAML: expected the node content, but found '<stream end>'"),
])
def test_mapping_errors_are_one_line_with_file_line_and_field(text: str, message: str) -> None:
    with pytest.raises(MappingError) as info:
        parse_mapping(text, "m.yaml")
    assert str(info.value) == message and "\n" not in str(info.value)


def test_unreadable_mapping_file(tmp_path: Path) -> None:
    with pytest.raises(MappingError, match=r"^.*missing\.yaml: cannot read mapping file: No such file or directory$"):
        load_mapping(tmp_path / "missing.yaml")


def test_repository_uses_registry_and_org() -> None:
    options = MigrationOptions(registry="registry.example.com", org="hardened")
    assert options.repository("python") == "registry.example.com/hardened/python"
    assert options.repository("ghcr.io/acme/jre") == "ghcr.io/acme/jre"
    assert MigrationOptions().repository("static") == "cgr.dev/chainguard/static"
