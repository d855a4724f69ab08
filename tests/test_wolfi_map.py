"""Wolfi names from data: the vendored index, the mapping table, and lookups against both."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from repocontext.dockerfile.parser import parse as parse_dockerfile
from subgraphs.distroless_migration import wolfi
from subgraphs.distroless_migration.wolfi import (
    BUILD_ONLY,
    PROVIDED_EVERYWHERE,
    RUNTIME_LIBS,
    Mapping,
    diff,
    lookup,
    main,
    problems,
    read,
    render,
    source_names,
    vendored,
    why_unmapped,
)
from tests import datapaths

SHARED_INDEX = datapaths.WOLFI_TSV
AWESOME_COMPOSE = datapaths.AWESOME_COMPOSE


def test_every_mapped_name_is_in_the_vendored_index() -> None:
    assert problems(vendored()) == []


def test_role_names_are_wolfi_names() -> None:
    index = vendored()
    assert sorted(n for n in BUILD_ONLY | PROVIDED_EVERYWHERE | RUNTIME_LIBS.keys() if not index.has(n)) == []


def test_vendored_index_matches_the_shared_export() -> None:
    if not SHARED_INDEX.is_file():
        pytest.skip(f"{SHARED_INDEX} not present (set WOLFI_PACKAGES_TSV to a wolfi-dev/os export)")
    assert diff(vendored(), read(SHARED_INDEX)) == []


def test_the_table_covers_the_common_packages() -> None:
    counts = source_names()
    assert sum(counts.values()) >= 300
    assert counts["apt"] >= 300 and counts["rpm"] >= 150 and counts["apk"] >= 50


@pytest.mark.parametrize(("name", "manager", "names"), [
    ("gettext", "apt-get", ["gettext"]),
    ("php", "apt-get", ["php"]),
    ("libreoffice", "apt", ["libreoffice"]),
    ("apache2", "apt-get", ["apache2"]),
    ("nginx", "apt-get", ["nginx"]),
    ("postgresql-client", "apt-get", ["postgresql-client"]),
    ("locales", "apt-get", ["glibc-locales"]),
    ("libmariadb-dev", "apt-get", ["mariadb-connector-c-dev"]),
    ("apt-transport-https", "apt-get", []),
    ("httpd", "dnf", ["apache2"]),
    ("php", "yum", ["php"]),
    ("postgresql", "microdnf", ["postgresql-client"]),  # Fedora's `postgresql` is the client
    ("Development Tools", "yum", ["build-base"]),
    ("musl-dev", "apk", ["glibc-dev"]),
    ("php83-pecl-redis", "apk", ["php-8.3-redis"]),
    ("ruby", "apk", ["ruby-3.4"]),  # the table wins over a provided name
])
def test_table_lookups(name: str, manager: str, names: list[str]) -> None:
    assert lookup(name, manager, {}) == Mapping(names, "table")


def test_alpine_names_wolfi_has_are_used_as_written() -> None:
    assert lookup("curl", "apk", {}) == Mapping(["curl"], "same-name")
    assert lookup("python3", "apk", {}) == Mapping(["python3"], "same-name")  # provided by python-3.x
    assert lookup("libnope", "apk", {}) is None


def test_apt_and_rpm_same_names_are_marked() -> None:
    assert lookup("fzf", "apt-get", {}) == Mapping(["fzf"], "same-name")
    assert lookup("fzf", "dnf", {}) == Mapping(["fzf"], "same-name")
    assert lookup("libnope", "apt-get", {}) is None
    assert lookup("curl", "zypper", {}) is None  # no family: nothing is guessed


def test_known_unmapped_names_have_a_reason_and_no_mapping() -> None:
    assert lookup("clang", "apt-get", {}) is None
    assert "clang" in (why_unmapped("clang", "apt-get") or "")
    assert lookup("yq", "apt-get", {}) is None  # Wolfi has a yq, but not Debian's
    assert lookup("mysql-client", "apk", {}) is None and why_unmapped("mysql-client", "apk")
    assert why_unmapped("git", "apt-get") is None and why_unmapped("git", "zypper") is None


def test_overrides_come_first() -> None:
    assert lookup("clang", "apt-get", {"clang": ["llvm"]}) == Mapping(["llvm"], "override")
    assert lookup("curl", "apk", {"curl": []}) == Mapping([], "override")


def test_templated_provides_are_not_names() -> None:
    index = wolfi.parse_index(["name\tprovides\n", "gcc\tgcc-${{vars.major-version}},cc\n", "zlib\n"])
    assert index.packages == {"gcc": ("cc",), "zlib": ()}
    assert index.has("cc") and not index.has("gcc-${{vars.major-version}}")


def test_render_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "index.tsv"
    path.write_text(render(vendored()), encoding="utf-8")
    assert read(path) == vendored()


def test_check_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 0
    assert "agree" in capsys.readouterr().out
    assert main(["refresh"]) == 2


def _installed(tarball: Path) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    with tarfile.open(tarball) as archive:
        for member in archive.getmembers():
            if member.isfile() and Path(member.name).name.startswith("Dockerfile"):
                handle = archive.extractfile(member)
                assert handle is not None
                parsed = parse_dockerfile(handle.read().decode("utf-8", "replace"), member.name)
                found |= {(p.manager, p.name) for s in parsed.dockerfile.stages for p in s.packages}
    return found


def test_awesome_compose_packages_map() -> None:
    if not AWESOME_COMPOSE.is_file():
        pytest.skip(f"{AWESOME_COMPOSE} not present (set AWESOME_COMPOSE_TARBALL)")
    installed = _installed(AWESOME_COMPOSE)
    assert len(installed) >= 3
    missing = sorted((m, n) for m, n in installed if lookup(n, m, {}) is None and why_unmapped(n, m) is None)
    assert missing == []
