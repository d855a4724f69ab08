"""Cargo.toml and Cargo.lock parsers: sections, renames, sources, lines; the lock's roots and chains (v1 to v4)."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repocontext.deps.cargo import parse_cargo_toml
from repocontext.deps.cargo_lock import REGISTRY, cargo_layout, parse_cargo_lock
from repocontext.deps.common import Parsed, read_lock
from tests.datapaths import CORPUS

MANIFEST = """\
[package]
name = "app"
version = "0.1.0"

[workspace]
members = ["crates/*"]

[workspace.dependencies]
serde = { version = "1.0.100", features = ["derive"] }

[dependencies]
smallvec = "1.6"
rand_old = { package = "rand", version = "=0.7.3" }
local = { path = "crates/local", version = "0.2" }
fork = { git = "https://github.com/o/fork", tag = "v1" }
serde.workspace = true

[dependencies.time]
default-features = false
version = "~0.1.42"

[dev-dependencies]
tempfile = "3"

[build_dependencies]
cc = ">=1.0, <2"

[target.'cfg(unix)'.dependencies]
nix = "0.20"
"""


def test_cargo_toml_sections_renames_sources_and_lines() -> None:
    parsed = parse_cargo_toml("Cargo.toml", MANIFEST)
    assert parsed.issues == []
    got = {(d.name, d.section): (d.constraint, d.version, d.line, d.dev, d.source) for d in parsed.deps}
    assert got == {
        ("serde", "workspace.dependencies"): ("1.0.100", None, 9, False, None),
        ("smallvec", "dependencies"): ("1.6", None, 12, False, None),
        ("rand", "dependencies"): ("=0.7.3", "0.7.3", 13, False, None),
        ("local", "dependencies"): ("0.2", None, 14, False, "path:crates/local"),
        ("fork", "dependencies"): (None, None, 15, False, "git+https://github.com/o/fork#v1"),
        ("serde", "dependencies"): (None, None, 16, False, None),
        ("time", "dependencies"): ("~0.1.42", None, 20, False, None),
        ("tempfile", "dev-dependencies"): ("3", None, 23, True, None),
        ("cc", "build_dependencies"): (">=1.0, <2", None, 26, False, None),
        ("nix", "target.'cfg(unix)'.dependencies"): ("0.20", None, 29, False, None),
    }


def test_cargo_toml_invalid_is_one_issue_with_its_line() -> None:
    parsed = parse_cargo_toml("Cargo.toml", "[dependencies]\nserde = \n")
    assert parsed.deps == [] and len(parsed.issues) == 1 and parsed.issues[0].line == 2


LOCK_V3 = """\
version = 3

[[package]]
name = "app"
version = "0.1.0"
dependencies = [
 "smallvec",
 "time 0.1.45",
 "tempfile",
]

[[package]]
name = "smallvec"
version = "1.6.0"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "tempfile"
version = "3.1.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
dependencies = [
 "time 0.2.0",
]

[[package]]
name = "time"
version = "0.1.45"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "time"
version = "0.2.0"
source = "git+https://github.com/time-rs/time?rev=abc#abc"
"""


def test_cargo_lock_roots_chains_duplicates_and_dev() -> None:
    parsed = parse_cargo_lock("Cargo.lock", LOCK_V3, {"tempfile": True, "smallvec": False})
    assert parsed.issues == []
    got = [(d.name, d.version, d.direct, d.path, d.dev, d.line, d.source) for d in parsed.deps]
    assert got == [
        ("smallvec", "1.6.0", True, [], False, 12, None),
        ("tempfile", "3.1.0", True, [], True, 17, None),
        ("time", "0.1.45", True, [], False, 25, None),
        ("time", "0.2.0", False, ["tempfile", "time"], True, 30, "git+https://github.com/time-rs/time?rev=abc#abc"),
    ]


LOCK_V1 = """\
[root]
name = "app"
version = "0.1.0"
dependencies = [
 "libc 0.2.20 (registry+https://github.com/rust-lang/crates.io-index)",
]

[[package]]
name = "libc"
version = "0.2.20"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "unused"
version = "1.0.0"
source = "registry+https://github.com/rust-lang/crates.io-index"

[metadata]
"checksum libc 0.2.20 (registry+https://github.com/rust-lang/crates.io-index)" = "abc"
"""


def test_cargo_lock_v1_root_table() -> None:
    parsed = parse_cargo_lock("Cargo.lock", LOCK_V1)
    assert [(d.name, d.direct, d.path, d.line) for d in parsed.deps] == [
        ("libc", True, [], 8), ("unused", False, [], 13)]


def test_cargo_lock_dangling_dependency_is_an_issue() -> None:
    text = '[[package]]\nname = "a"\nversion = "1.0.0"\ndependencies = ["missing"]\n'
    parsed = parse_cargo_lock("Cargo.lock", text)
    assert parsed.deps == [] and "missing" in parsed.issues[0].message and parsed.issues[0].line == 1


@pytest.mark.skipif(not (CORPUS / "ripgrep.tar.gz").is_file(), reason="the real-world corpus is absent")
def test_ripgrep_workspace_lock_and_members(tmp_path: Path) -> None:
    with tarfile.open(CORPUS / "ripgrep.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    root = tmp_path / "ripgrep"
    lock = parse_cargo_lock("Cargo.lock", (root / "Cargo.lock").read_text())
    assert lock.issues == [] and len(lock.deps) == 52  # 63 packages, 11 of them workspace members
    by_name = {(d.name, d.version): d for d in lock.deps}
    assert by_name[("regex-automata", "0.4.18")].direct
    assert by_name[("cc", "1.4.0")].path == ["pcre2", "pcre2-sys", "cc"]
    assert not any(d.name in ("ripgrep", "grep", "ignore") for d in lock.deps)
    member = parse_cargo_toml("crates/ignore/Cargo.toml", (root / "crates/ignore/Cargo.toml").read_text())
    automata = next(d for d in member.deps if d.name == "regex-automata")
    assert (automata.line, automata.constraint) == (31, "0.4.18")
    assert (root / "crates/ignore/Cargo.toml").read_text().splitlines()[30].strip() == 'version = "0.4.18"'


_NAMES = st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True)
_VERSIONS = st.from_regex(r"[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{1,2}(?:-[a-z0-9.]{1,5})?(?:\+[a-z0-9.-]{1,6})?",
                          fullmatch=True)
_SOURCES = st.sampled_from([None, REGISTRY, "git+https://github.com/o/r?rev=1#abc", "sparse+https://x.test/"])


@st.composite
def lock_texts(draw: st.DrawFn) -> str:
    out = [draw(st.sampled_from(["", "# This file is automatically @generated by Cargo.\n"])),
           draw(st.sampled_from(["", "version = 3\n\n", "version = 4\n\n"]))]
    for _ in range(draw(st.integers(0, 5))):
        out.append(f'[[package]]\nname = "{draw(_NAMES)}"\nversion = "{draw(_VERSIONS)}"\n')
        source = draw(_SOURCES)
        if source is not None:
            out.append(f'source = "{source}"\n')
            if draw(st.booleans()):
                out.append(f'checksum = "{"ab" * 32}"\n')
        deps = draw(st.lists(st.tuples(_NAMES, st.sampled_from(["", " 1.0.0", f" 1.0.0 ({REGISTRY})"])), max_size=3))
        if deps:
            out.append("dependencies = [\n" + "".join(f' "{n}{v}",\n' for n, v in deps) + "]\n")
        out.append("\n")
    text = "".join(out)
    return text + draw(st.sampled_from(["", "\n", "[metadata]\n", '[[patch.unused]]\nname = "x"\n', "x = 1\n"]))


@settings(max_examples=200, deadline=None)
@given(text=lock_texts())
def test_cargo_layout_reads_what_tomllib_reads(text: str) -> None:
    """The fast reading of cargo's own layout gives tomllib's entries (less checksums) and header lines, or
    declines the text."""
    fast = cargo_layout(text)
    slow = read_lock("Cargo.lock", text)
    if fast is None:
        return
    assert not isinstance(slow, Parsed)
    entries = [{k: v for k, v in e.items() if k != "checksum"} for e in slow[0]]
    assert (fast[0], fast[1]) == (entries, slow[1])


def test_cargo_layout_declines_other_layouts() -> None:
    assert cargo_layout(LOCK_V1) is None and cargo_layout(LOCK_V3 + "\n[metadata]\n") is None
    assert cargo_layout(LOCK_V3.replace("\n", "\r\n")) is None
    assert cargo_layout(LOCK_V3) is not None
