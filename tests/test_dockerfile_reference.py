"""Image references by Docker's rules: registry inference, library/, tags and digests."""

from __future__ import annotations

import pytest

from repocontext.dockerfile.reference import ImageRef, parse_reference

DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(("ref", "registry", "name", "tag", "digest", "normalized"), [
    ("python", "docker.io", "python", None, None, "docker.io/library/python:latest"),
    ("python:3.12-slim", "docker.io", "python", "3.12-slim", None, "docker.io/library/python:3.12-slim"),
    ("library/python:3", "docker.io", "library/python", "3", None, "docker.io/library/python:3"),
    ("bitnami/redis:7.2", "docker.io", "bitnami/redis", "7.2", None, "docker.io/bitnami/redis:7.2"),
    ("index.docker.io/nginx", "index.docker.io", "nginx", None, None, "docker.io/library/nginx:latest"),
    (f"nginx@{DIGEST}", "docker.io", "nginx", None, DIGEST, f"docker.io/library/nginx@{DIGEST}"),
    (f"nginx:1.25@{DIGEST}", "docker.io", "nginx", "1.25", DIGEST, f"docker.io/library/nginx:1.25@{DIGEST}"),
    ("localhost/app", "localhost", "app", None, None, "localhost/app:latest"),
    ("localhost:5000/a/b:c", "localhost:5000", "a/b", "c", None, "localhost:5000/a/b:c"),
    ("Registry/app", "Registry", "app", None, None, "Registry/app:latest"),
    ("cgr.dev/chainguard/python:latest-dev", "cgr.dev", "chainguard/python", "latest-dev", None,
     "cgr.dev/chainguard/python:latest-dev"),
    ("[::1]:5000/app:1", "[::1]:5000", "app", "1", None, "[::1]:5000/app:1"),
])
def test_valid_references(ref: str, registry: str, name: str, tag: str | None, digest: str | None,
                          normalized: str) -> None:
    parsed = parse_reference(ref)
    assert isinstance(parsed, ImageRef)
    assert (parsed.registry, parsed.name, parsed.tag, parsed.digest, parsed.normalized) == (
        registry, name, tag, digest, normalized)


@pytest.mark.parametrize(("ref", "message"), [
    ("Python", "invalid repository name 'Python' (lower-case letters, digits and separators only)"),
    ("python:-bad", "invalid tag '-bad'"),
    ("python@sha256:short", "invalid digest 'sha256:short'"),
    ("bad_host.io:x/app", "invalid registry 'bad_host.io:x'"),
    ("a//b", "invalid repository name 'a//b' (lower-case letters, digits and separators only)"),
    ("", "invalid repository name '' (lower-case letters, digits and separators only)"),
])
def test_invalid_references(ref: str, message: str) -> None:
    assert parse_reference(ref) == message
