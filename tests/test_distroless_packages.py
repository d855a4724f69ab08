"""Package names → Wolfi, roles, and language runtimes."""

from __future__ import annotations

from subgraphs.distroless_migration.wolfi import role, runtime_of, wolfi_names


def test_wolfi_names() -> None:
    assert wolfi_names("build-essential", "apt-get", {}) == ["build-base"]
    assert wolfi_names("libpq-dev", "apt", {}) == ["postgresql-dev"]
    assert wolfi_names("python3-dev", "apt-get", {}) == ["python-3-dev"]
    assert wolfi_names("openssl-devel", "microdnf", {}) == ["openssl-dev"]
    assert wolfi_names("Development Tools", "yum", {}) == ["build-base"]
    assert wolfi_names("apt-utils", "apt-get", {}) == []
    assert wolfi_names("libpq-dev", "dnf", {}) is None  # a Debian name under an RPM manager is not guessed
    assert wolfi_names("libnope", "apt-get", {}) is None
    assert wolfi_names("curl", "apk", {}) == ["curl"]  # an Alpine name Wolfi has is used as written
    assert wolfi_names("musl-dev", "apk", {}) == ["glibc-dev"]  # one it lacks goes through the table
    assert wolfi_names("fzf", "apt-get", {}) is None  # same name in Wolfi: only lookup() says so, marked
    assert wolfi_names("libnope", "apt-get", {"libnope": ["nope"]}) == ["nope"]


def test_runtime_of() -> None:
    assert runtime_of("python3") == ("python", None)
    assert runtime_of("python3.11-pip") == ("python", "3.11")
    assert runtime_of("nodejs") == ("node", None)
    assert runtime_of("openjdk-17-jre-headless") == ("jdk", "17")
    assert runtime_of("java-21-openjdk-devel") == ("jdk", "21")
    assert runtime_of("golang-go") == ("go", None)
    assert runtime_of("curl") is None


def test_roles() -> None:
    assert [role(n, []) for n in ("ca-certificates", "tzdata", "build-base", "postgresql-dev", "ffmpeg")] == [
        "provided", "data", "build", "library", "runtime"]
    assert role("ffmpeg", ["ffmpeg"]) == "build"
