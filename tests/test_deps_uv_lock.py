"""uv.lock: workspace root as the direct set, extras edges, dev groups, sources."""

from __future__ import annotations

from pathlib import Path

from repocontext.deps.common import Parsed
from repocontext.deps.uv_lock import parse_uv_lock

LOCK = """\
version = 1
requires-python = ">=3.11"

[[package]]
name = "app"
version = "0.1.0"
source = { editable = "." }
dependencies = [
    { name = "httpx", extra = ["http2"] },
]

[package.optional-dependencies]
docs = [
    { name = "sphinx" },
]
s3 = [
    { name = "boto3" },
]

[package.dev-dependencies]
dev = [
    { name = "pytest" },
]

[[package]]
name = "httpx"
version = "0.27.0"
source = { registry = "https://pypi.org/simple" }
dependencies = [
    { name = "anyio" },
]
sdist = { url = "https://files.example/httpx-0.27.0.tar.gz", hash = "sha256:00" }

[package.optional-dependencies]
http2 = [
    { name = "h2" },
]
socks = [
    { name = "socksio" },
]

[[package]]
name = "anyio"
version = "4.4.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "h2"
version = "4.1.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "socksio"
version = "1.0.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "pytest"
version = "8.2.0"
source = { registry = "https://pypi.org/simple" }
dependencies = [
    { name = "iniconfig" },
    { name = "anyio", marker = "python_version < '3.12'" },
]

[[package]]
name = "iniconfig"
version = "2.0.0"
source = { git = "https://github.com/pytest-dev/iniconfig?rev=v2#abc" }

[[package]]
name = "Sphinx"
version = "7.0.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "boto3"
version = "1.34.0"
source = { path = "vendor/boto3-1.34.0.tar.gz" }
"""


def _rows(parsed: Parsed) -> list[tuple]:
    return [(d.name, d.version, d.constraint, d.direct, d.path, d.dev, d.file, d.line) for d in parsed.deps]


def test_root_project_gives_direct_set(tmp_path: Path) -> None:
    (tmp_path / "uv.lock").write_text(LOCK)
    parsed = parse_uv_lock("uv.lock", (tmp_path / "uv.lock").read_text(), None)
    assert _rows(parsed) == [
        ("httpx", "0.27.0", None, True, [], False, "uv.lock", 25),
        ("anyio", "4.4.0", None, False, ["httpx", "anyio"], False, "uv.lock", 42),
        ("h2", "4.1.0", None, False, ["httpx", "h2"], False, "uv.lock", 47),
        ("socksio", "1.0.0", None, False, [], False, "uv.lock", 52),  # extra nobody requests: unreachable
        ("pytest", "8.2.0", None, True, [], True, "uv.lock", 57),
        ("iniconfig", "2.0.0", None, False, ["pytest", "iniconfig"], True, "uv.lock", 66),
        ("sphinx", "7.0.0", None, True, [], True, "uv.lock", 71),  # "docs" extra: dev-named
        ("boto3", "1.34.0", None, True, [], False, "uv.lock", 76),  # "s3" extra: a runtime feature
    ]
    assert [d.source for d in parsed.deps] == [None, None, None, None, None,
                                                "git+https://github.com/pytest-dev/iniconfig?rev=v2#abc", None,
                                                "vendor/boto3-1.34.0.tar.gz"]
    assert parsed.issues == []


def test_workspace_members_are_not_recorded_and_fallback_uses_manifest() -> None:
    lock = ('version = 1\n\n[[package]]\nname = "root"\nsource = { virtual = "." }\n\n'
            '[[package]]\nname = "lib"\nversion = "0.1"\nsource = { editable = "packages/lib" }\n'
            'dependencies = [{ name = "six" }]\n\n'
            '[[package]]\nname = "six"\nversion = "1.16.0"\nsource = { registry = "https://pypi.org/simple" }\n')
    assert _rows(parse_uv_lock("uv.lock", lock, None)) == [("six", "1.16.0", None, True, [], False, "uv.lock", 13)]
    plain = ('version = 1\n\n[[package]]\nname = "a"\nversion = "1"\ndependencies = [{ name = "b" }]\n\n'
             '[[package]]\nname = "b"\nversion = "2"\n')
    assert _rows(parse_uv_lock("uv.lock", plain, {"a": True})) == [
        ("a", "1", None, True, [], True, "uv.lock", 3),
        ("b", "2", None, False, ["a", "b"], True, "uv.lock", 8),
    ]


def test_malformed_uv_lock() -> None:
    parsed = parse_uv_lock("uv.lock", 'version = 1\n[[package]\nname = "a"\n', None)
    assert parsed.deps == []
    assert [(i.line, i.level) for i in parsed.issues] == [(2, "error")]
