"""Test files of Rust, Ruby, PHP, Java/Kotlin and C#: which they are, their framework, and the files they test.

Test files by name or place (nothing is run; `kind_of_other_test`):
  * Rust ("cargo-test"): a `.rs` file under a `tests/` directory (a crate's
    integration tests), or any `.rs` file whose source holds `#[test]`
    (`#[tokio::test]` and the like too) or `#[cfg(test)]` (inline unit tests;
    found by content, `has_inline_tests`).
  * Ruby: `*_spec.rb` or under `spec/` (rspec); `*_test.rb`, `test_*.rb` or
    under `test/` (minitest; "test-unit" when it requires `test/unit`).
  * PHP ("phpunit"): `*Test.php`, or under `tests/`.
  * Java/Kotlin: `*Test`, `*Tests`, `*IT`, `*TestCase` `.java`/`.kt`, or under
    `src/test/`, `src/androidTest/`, `src/integrationTest/` ("junit"; "testng",
    "kotest" or "kotlin-test" when it imports those instead of JUnit).
  * C#: `*Test.cs`, `*Tests.cs`, or in a directory named `test`/`tests` or
    ending in `.Test`/`Tests` (a `Foo.Tests` project, `UnitTests`): "xunit",
    "nunit" or "mstest" by the test library it imports (`using Xunit;`) or,
    failing that, by the attributes it uses (`[Fact]`, `[Test]`,
    `[TestMethod]`); "dotnet-test" when neither tells.

What a test covers (`subjects`), decided from paths and the test's own imports only:
  * its subject: the non-test file of the same language named like the test
    without its affix (FooTest.java → Foo.java, FooTests.cs → Foo.cs,
    FooTest.php → Foo.php, foo_spec.rb / foo_test.rb / test_foo.rb → foo.rb).
    The first that exists of: the mirror path (src/test/java/a/FooTest.java →
    src/main/java/a/Foo.java or src/main/kotlin/a/Foo.kt; spec/models/x_spec.rb →
    app/models/x.rb, lib/models/x.rb or models/x.rb; tests/Unit/a/XTest.php →
    src/, app/ or lib/ + a/X.php, with or without the first directory under
    tests/; tests/Foo.Tests/a/XTests.cs → src/Foo/a/X.cs), the file beside the
    test, else the one non-test file anywhere with that name (none when several).
    A C# test named without the affix takes its directory's name instead
    (BasketTests/BasketAddItem.cs → Basket.cs: a file per scenario);
  * Java/Kotlin: every non-test file an import names (`import a.b.Foo;` →
    `…/a/b/Foo.java` or `.kt`; a static import's class too); PHP alike for `use`
    (`use App\\Models\\User;` → `…/Models/User.php`, the namespace root dropped,
    as a PSR-4 prefix maps it onto a directory);
  * Rust: a file with inline tests covers itself; an integration test under
    `<crate>/tests/` covers `<crate>/src/lib.rs` (that file's own sites only:
    the `mod` tree below it is not followed). Ruby `require`s and C# `using`s
    name no file and are not followed.
"Non-test" is by path here (the rules above without the Rust content rule),
so what a test covers never depends on another file's content.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import PurePosixPath

from repocontext.paths import is_plain, split_path

OTHER_KINDS = frozenset({"rust", "ruby", "php", "jvm", "csharp"})
_SUFFIX_KIND = {".rs": "rust", ".rb": "ruby", ".php": "php", ".java": "jvm", ".kt": "jvm", ".cs": "csharp"}
# Name affixes a test adds to its subject's name, longest first.
_AFFIXES = {"jvm": ("TestCase", "Tests", "Test", "IT"), "csharp": ("Tests", "Test"), "php": ("Test",),
            "ruby": ("_spec", "_test")}
_JVM_TEST_ROOTS = frozenset({"test", "androidTest", "integrationTest"})
_INLINE = re.compile(r"#\[\s*(?:[A-Za-z_][A-Za-z0-9_]*::)*test\s*\]|#\[\s*cfg\s*\(\s*test\s*\)\s*\]")
_CS_ATTRIBUTES = (("xunit", re.compile(r"\[\s*(?:Fact|Theory)\b")),
                  ("nunit", re.compile(r"\[\s*(?:Test|TestCase|TestFixture)\b")),
                  ("mstest", re.compile(r"\[\s*(?:TestMethod|TestClass)\b")))
_CS_LIBRARIES = (("Xunit", "xunit"), ("NUnit", "nunit"), ("Microsoft.VisualStudio.TestTools", "mstest"))
_JVM_LIBRARIES = (("org.testng", "testng"), ("io.kotest", "kotest"), ("org.junit", "junit"),
                  ("kotlin.test", "kotlin-test"))
_STANDARD = {"jvm": ("java.", "javax.", "kotlin.", "jdk."), "csharp": ("System.",)}


def _dirs(path: str) -> list[str]:
    """The directory names above a file (as PurePosixPath(path).parts[:-1] gives them)."""
    return path.split("/")[:-1] if is_plain(path) else list(PurePosixPath(path).parts[:-1])


def _stem_ext(name: str) -> tuple[str, str]:
    stem, ext = posixpath.splitext(name)
    return stem, ext


def kind_of_other_test(path: str) -> str | None:
    """"rust", "ruby", "php", "jvm" or "csharp" when the path names a test file of that language by name or
    place; None otherwise (a Rust file with inline tests is found by content: `has_inline_tests`)."""
    name = split_path(path)[1]
    stem, ext = _stem_ext(name)
    kind = _SUFFIX_KIND.get(ext)
    if kind is None:
        return None
    dirs = _dirs(path)
    if kind == "rust":
        found = "tests" in dirs
    elif kind == "ruby":
        found = stem.endswith(("_spec", "_test")) or stem.startswith("test_") or "spec" in dirs or "test" in dirs
    elif kind == "php":
        found = stem.endswith("Test") or "tests" in dirs
    elif kind == "jvm":
        found = stem.endswith(_AFFIXES["jvm"]) or _jvm_root(dirs) >= 0
    else:
        found = stem.endswith(("Test", "Tests")) or any(_cs_test_dir(d) for d in dirs)
    return kind if found else None


def _jvm_root(dirs: Sequence[str]) -> int:
    """The index of `src` in a `src/test/` (or androidTest, integrationTest) pair; -1 when there is none."""
    return next((i for i in range(len(dirs) - 1) if dirs[i] == "src" and dirs[i + 1] in _JVM_TEST_ROOTS), -1)


def _cs_test_dir(name: str) -> bool:
    return name in ("test", "tests") or name.endswith((".Test", "Tests"))


def has_inline_tests(text: str) -> bool:
    """Whether Rust source holds a `#[test]` function or a `#[cfg(test)]` item (cargo test runs them)."""
    return ("test" in text) and _INLINE.search(text) is not None


def framework(kind: str, path: str, imports: Sequence[str], read: Callable[[], str | None]) -> str:
    """The test framework of a test file of `kind`; `read()` gives its source (asked only for C# whose
    imports do not tell)."""
    if kind == "rust":
        return "cargo-test"
    if kind == "php":
        return "phpunit"
    if kind == "ruby":
        if any(i == "rspec" or i.startswith("rspec/") for i in imports):
            return "rspec"
        if any(i == "minitest" or i.startswith("minitest/") for i in imports):
            return "minitest"
        if "test/unit" in imports:
            return "test-unit"
        stem = _stem_ext(split_path(path)[1])[0]
        return "rspec" if stem.endswith("_spec") or ("spec" in _dirs(path) and not stem.endswith("_test")) \
            else "minitest"
    if kind == "jvm":
        return _by_prefix(imports, _JVM_LIBRARIES) or "junit"
    found = _by_prefix(imports, _CS_LIBRARIES)
    if found is None:
        text = read() or ""
        found = next((name for name, pattern in _CS_ATTRIBUTES if pattern.search(text)), None)
    return found or "dotnet-test"


def _by_prefix(imports: Sequence[str], libraries: Sequence[tuple[str, str]]) -> str | None:
    for prefix, name in libraries:
        if any(i == prefix or i.startswith(prefix + ".") for i in imports):
            return name
    return None


def external_imports(kind: str, imports: Iterable[str]) -> list[str]:
    """What a test imports, less the language's standard library where its names say so (java.*, System.*)."""
    standard = _STANDARD.get(kind, ())
    return sorted({i for i in imports if i != "System" and not i.startswith(standard)})


class Paths:
    """What subject resolution asks of the repository: whether a path is indexed, and the paths with a name."""

    def __init__(self, exists: Callable[[str], bool], named: Callable[[str], Sequence[str]]) -> None:
        self.exists = exists
        self.named = named

    def source(self, path: str) -> bool:
        """An indexed file that is no test by path."""
        return self.exists(path) and kind_of_other_test(path) is None


def subjects(path: str, kind: str, imports: Sequence[str], inline: bool, repo: Paths) -> set[str]:
    """The repository files whose third-party call sites the test at `path` covers (see the module doc)."""
    if kind == "rust":
        found = {path} if inline else set()
        lib = _crate_lib(path)
        if lib is not None and repo.exists(lib):
            found.add(lib)
        return found
    found = set()
    subject = _subject(path, kind, repo)
    if subject is not None:
        found.add(subject)
    if kind in ("jvm", "php"):
        found.update(_imported_files(kind, imports, repo))
    return found


def _crate_lib(path: str) -> str | None:
    dirs = _dirs(path)
    if "tests" not in dirs:
        return None
    crate = dirs[:dirs.index("tests")]
    return "/".join([*crate, "src", "lib.rs"])


def subject_names(kind: str, name: str) -> list[str]:
    """The file names a test's subject may have (FooTest.java → Foo.java, Foo.kt); [] when the name has no
    test affix."""
    stem, ext = _stem_ext(name)
    bare = next((stem[:-len(a)] for a in _AFFIXES.get(kind, ()) if stem.endswith(a) and len(stem) > len(a)), None)
    if bare is None and kind == "ruby" and stem.startswith("test_") and len(stem) > 5:
        bare = stem[5:]
    if bare is None:
        return []
    exts = [ext, ".kt" if ext == ".java" else ".java"] if kind == "jvm" else [ext]
    return [bare + e for e in exts]


def _subject(path: str, kind: str, repo: Paths) -> str | None:
    names = subject_names(kind, split_path(path)[1])
    dirs = _dirs(path)
    if not names and kind == "csharp" and dirs:  # one file per scenario: BasketTests/BasketAddItem.cs → Basket.cs
        names = subject_names(kind, dirs[-1] + ".cs")
        dirs = dirs[:-1]
    if not names:
        return None
    for folder in [*_mirrors(kind, dirs), dirs]:
        for name in names:
            candidate = "/".join([*folder, name])
            if repo.source(candidate):
                return candidate
    anywhere = sorted({p for name in names for p in repo.named(name) if repo.source(p)})
    return anywhere[0] if len(anywhere) == 1 else None


def _mirrors(kind: str, dirs: list[str]) -> list[list[str]]:
    """The source directories mirroring a test's directory, most likely first."""
    if kind == "jvm":
        at = _jvm_root(dirs)
        if at < 0:
            return []
        head, rest = [*dirs[:at], "src", "main"], dirs[at + 2:]
        swapped = {"java": "kotlin", "kotlin": "java"}.get(rest[0]) if rest else None
        return [head + rest] + ([[*head, swapped, *rest[1:]]] if swapped else [])
    if kind == "csharp":
        mapped = [_cs_source_dir(d) for d in dirs]
        return [mapped] if mapped != dirs else []
    roots = {"ruby": ("spec", "test"), "php": ("tests", "test")}[kind]
    at = next((i for i, d in enumerate(dirs) if d in roots), -1)
    if at < 0:
        return []
    head, rest = dirs[:at], dirs[at + 1:]
    if kind == "ruby":
        return [[*head, *base, *rest] for base in (["app"], ["lib"], [])]
    tails = [rest, rest[1:]] if rest else [rest]
    return [[*head, *base, *tail] for base in (["src"], ["app"], ["lib"], []) for tail in tails]


def _cs_source_dir(name: str) -> str:
    """tests → src, Foo.Tests / Foo.UnitTests / Foo.Test → Foo."""
    if name in ("test", "tests"):
        return "src"
    for affix in (".UnitTests", ".IntegrationTests", ".FunctionalTests", ".Tests", ".Test"):
        if name.endswith(affix) and len(name) > len(affix):
            return name[:-len(affix)]
    return name


def _imported_files(kind: str, imports: Sequence[str], repo: Paths) -> set[str]:
    """Non-test files a JVM import (`a.b.Foo`, static `a.b.Foo.m`) or a PHP `use` (`App\\M\\User`) names."""
    found: set[str] = set()
    exts: tuple[str, ...]
    for name in imports:
        if kind == "jvm":
            parts = name.split(".")
            tails = [parts, parts[:-1]]
            exts = (".java", ".kt")
        else:
            parts = name.strip("\\").split("\\")
            tails = [parts[1:]] if len(parts) > 1 else []
            exts = (".php",)
        for tail in tails:
            if not tail:
                continue
            for ext in exts:
                rel = "/".join(tail) + ext
                found.update(p for p in repo.named(tail[-1] + ext)
                             if (p == rel or p.endswith("/" + rel)) and repo.source(p))
    return found
