"""Glob semantics, the escape checks, and the indexed matcher agreeing with the plain one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wcmatch import glob as wcglob

from planner.policy.enforce import check_edits, from_state
from repocontext.globs import GlobError, PathIndex, check_glob, match

PATHS = sorted([
    "Dockerfile", "svc/Dockerfile", "svc/api.Dockerfile", "svc/Dockerfile.prod", "requirements.txt",
    "requirements-dev.txt", "reqs/requirements/base.txt", "src/pkg/__init__.py", "src/pkg/mod.py",
    "tests/test_mod.py", "tests/unit/test_deep.py", ".env", "config/.env.local", "a/b/c/d.go", "README.md",
    "docs/index.md", "scripts/entrypoint.sh", "scripts/docker-entrypoint.sh", "weird name [1].txt",
])


@pytest.mark.parametrize(("pattern", "expected"), [
    ("Dockerfile", ["Dockerfile", "svc/Dockerfile"]),
    ("/Dockerfile".lstrip("/"), ["Dockerfile", "svc/Dockerfile"]),
    ("**/*.Dockerfile", ["svc/api.Dockerfile"]),
    ("**/Dockerfile.*", ["svc/Dockerfile.prod"]),
    ("*.txt", ["reqs/requirements/base.txt", "requirements-dev.txt", "requirements.txt", "weird name [1].txt"]),
    ("**/requirements*.txt", ["requirements-dev.txt", "requirements.txt"]),
    ("src/**/*.py", ["src/pkg/__init__.py", "src/pkg/mod.py"]),
    ("tests/*.py", ["tests/test_mod.py"]),
    ("tests/**", ["tests/test_mod.py", "tests/unit/test_deep.py"]),
    ("a/**/d.go", ["a/b/c/d.go"]),
    ("**/test_?ee?.py", ["tests/unit/test_deep.py"]),
    ("**/[Rr]EADME.md", ["README.md"]),
    ("**/[!R]*.md", ["docs/index.md"]),
    ("**/*entrypoint*.sh", ["scripts/docker-entrypoint.sh", "scripts/entrypoint.sh"]),
    ("**/.env*", [".env", "config/.env.local"]),
    ("**/*.rs", []),
    # a leading `/` anchors at the root, as in .gitignore; a bare name matches at any depth
    ("/Dockerfile", ["Dockerfile"]),
    ("/README.md", ["README.md"]),
    ("/*.txt", ["requirements-dev.txt", "requirements.txt", "weird name [1].txt"]),
    ("/svc/Dockerfile*", ["svc/Dockerfile", "svc/Dockerfile.prod"]),
    ("/**/Dockerfile", ["Dockerfile", "svc/Dockerfile"]),
    ("/tests/**", ["tests/test_mod.py", "tests/unit/test_deep.py"]),
    ("/.env", [".env"]),
    ("/nothing.md", []),
])
def test_glob_semantics_and_index_agree(pattern: str, expected: list[str]) -> None:
    check_glob(pattern)
    brute = [p for p in PATHS if match(pattern, p)]
    assert brute == expected
    assert PathIndex(PATHS).match(pattern) == expected


def test_star_does_not_cross_directories() -> None:
    assert not match("src/*.py", "src/pkg/mod.py")
    assert match("src/*/mod.py", "src/pkg/mod.py")


@pytest.mark.parametrize("pattern", ["", " ", "../x", "a/../../b", "//etc/passwd", "/../x", "/", "~/.ssh/id_rsa",
                                     "C:/x", "a\\b", "[abc"])
def test_bad_globs_are_refused(pattern: str) -> None:
    with pytest.raises(GlobError):
        check_glob(pattern)


@pytest.mark.parametrize("pattern", [
    "**", "**/*.py", "src/**/*.py", "src/*/mod.py", "tests/**", "**/unit/*.py", "svc/Dockerfile*", "*.md",
    "docs/index.md", "a/**/d.go", "**/requirements/*.txt", "scripts/*entrypoint.sh", "weird name [[]1].txt",
    "config/.env*", "x/**/nothing.py",
    # plain names at any depth are looked up without a regex
    "Dockerfile", "**/Dockerfile", "./README.md", " d.go ", "**/**/mod.py", "**/missing.txt", "weird]name.txt",
    # a name `*tail` (tail without magic) is a suffix test, without a regex
    "*", "**/*", "src/*", "*.py", "**/*.Dockerfile", "svc/*Dockerfile", "*[1].txt", "**/*]1].txt", "*.env.local",
    # a name whose only magic is `*` is string tests; a literal folder is compared, not compiled
    "**/m*d.py", "**/*o*.*", "a/b/c/*.go", "svc/Dockerfile", "a/b/c/d.go", "src/*/*", "*e*n*v*", "scripts/*entry*.sh",
    # anchored at the root
    "/Dockerfile", "/*", "/**", "/*.md", "/[Rr]EADME.md", "/{README,x}.md", "/src/*/*.py", "/ d.go", "/a/**",
])
def test_the_index_matches_exactly_what_a_scan_matches(pattern: str) -> None:
    assert PathIndex(PATHS).match(pattern) == [p for p in PATHS if match(pattern, p)]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["*", "**", "a", "b", ".", "py", "[ab]", "?", "{a,b}", "]", "-", " "]),
                min_size=1, max_size=4),
       st.lists(st.text(alphabet="ab.py-] ", min_size=1, max_size=5), min_size=1, max_size=3),
       st.sampled_from(["", "**/", "a/", "a/b/", "b/*/", "a/**/", " a/", "/", "/a/", "/**/"]))
def test_the_index_agrees_with_a_scan_on_generated_globs(name: list[str], dirs: list[str], folder: str) -> None:
    paths = sorted({"/".join(dirs[:i]) + ("/" if i else "") + d for i in range(len(dirs)) for d in dirs})
    pattern = folder + "".join(name)
    try:
        expected = [p for p in paths if match(pattern, p)]
    except GlobError:
        with pytest.raises(GlobError):
            PathIndex(paths).match(pattern)
        return
    assert PathIndex(paths).match(pattern) == expected


def test_a_malformed_name_is_refused_by_the_index_too() -> None:
    for pattern in ("**/a}b", "a}b", "src/a}b", "src/a{b", "a{b/*.py", "**/[ab"):
        with pytest.raises(GlobError):
            PathIndex(PATHS).match(pattern)


# Our semantics in wcmatch's terms: `*`, `?` and classes match a leading dot (DOTGLOB), `**` as a whole
# segment is any number of directories (GLOBSTAR), a pattern without `/` matches at any depth, and one that
# starts with `/` is anchored at the root: wcmatch reads that as an absolute path, so the anchor goes first.
_WCMATCH_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB
_PATTERN_TOKENS = ["a", "b", "c", ".", "*", "?", "[!a]", "[^a]", "[a-c]", "[!a-b]", "[.-0]", "[]a]"]
_SEGMENTS = st.text(alphabet="abc.-_0", min_size=1, max_size=4).filter(lambda s: s not in (".", ".."))


def _wcmatch(pattern: str, path: str) -> bool:
    if pattern.startswith("/"):
        return wcglob.globmatch(path, pattern[1:], flags=_WCMATCH_FLAGS)
    return wcglob.globmatch(path, pattern if "/" in pattern else "**/" + pattern, flags=_WCMATCH_FLAGS)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(st.just("**"), st.lists(st.sampled_from(_PATTERN_TOKENS), min_size=1, max_size=4)
                          .map("".join).filter(lambda s: s not in (".", ".."))), min_size=1, max_size=4)
       .map("/".join),
       st.lists(_SEGMENTS, min_size=1, max_size=4).map("/".join), st.sampled_from(["", "/"]))
def test_the_matcher_agrees_with_wcmatch(pattern: str, path: str, anchor: str) -> None:
    pattern = anchor + pattern
    check_glob(pattern)
    assert match(pattern, path) == _wcmatch(pattern, path), (pattern, path)


@pytest.mark.parametrize(("pattern", "path"), [
    ("config[!_]*.yaml", "config/secret.yaml"),  # the policy hole: a negated class crossed the `/`
    ("config[^_]*.yaml", "config/secret.yaml"),
    ("a[.-0]b", "a/b"),  # a range spanning '/'
    ("src/x[!a]y.py", "src/x/y.py"),
])
def test_a_class_never_matches_a_slash(pattern: str, path: str) -> None:
    assert not match(pattern, path)
    assert PathIndex([path]).match(pattern) == []
    assert not _wcmatch(pattern, path)


def test_a_negated_class_in_a_policy_does_not_allow_a_subfolder() -> None:
    policy, _ = from_state({"policy": {"limits": {"paths": ["config[!_]*.yaml"]}}}, {})
    assert policy is not None
    refused = check_edits(policy, [{"file": "config/secret.yaml", "reason": ""}], {})
    assert [v.rule for v in refused] == ["policy.paths"]
    assert check_edits(policy, [{"file": "configx.yaml", "reason": ""}], {}) == []


@pytest.mark.parametrize("pattern", ["[b-a]", "x[z-a].py"])
def test_a_reversed_range_is_a_glob_error(pattern: str) -> None:
    with pytest.raises(GlobError, match="reversed range"):
        check_glob(pattern)
