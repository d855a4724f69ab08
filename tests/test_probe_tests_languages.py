"""The tests probe on Rust, Ruby, PHP, Java/Kotlin and C#: test files and frameworks, subject files covered, packages
used directly, the incremental update equal to a full gather, a real corpus tree, and a remediation report that
names the covering test."""

from __future__ import annotations

import json
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_all, write_files
from datapaths import CORPUS
from test_callsites_langs import FILES as LANG_FILES
from test_incremental_combine import Session

from planner.config import Settings
from planner.run.dispatch import dispatch
from repocontext.callsites.testfiles import kind_of_test
from repocontext.callsites.testfiles_langs import has_inline_tests, subject_names
from repocontext.gather import gather
from repocontext.probes.call_sites import CallSitesProbe
from repocontext.probes.dependencies import DependenciesProbe
from repocontext.probes.tests import TestsProbe

PROBES = (DependenciesProbe, CallSitesProbe, TestsProbe)


def test_test_files_by_name_and_place() -> None:
    tests = {
        "crates/x/tests/cli.rs": "rust", "tests/util/mod.rs": "rust",
        "spec/models/user_spec.rb": "ruby", "lib/a_test.rb": "ruby", "test_a.rb": "ruby",
        "spec/spec_helper.rb": "ruby", "test/fixtures/load.rb": "ruby",
        "src/FooTest.php": "php", "tests/TestCase.php": "php",
        "a/FooTest.java": "jvm", "a/FooTests.kt": "jvm", "a/FooIT.java": "jvm", "a/FooTestCase.java": "jvm",
        "m/src/test/java/a/Helper.java": "jvm", "app/src/androidTest/kotlin/a/Ui.kt": "jvm",
        "a/FooTests.cs": "csharp", "a/FooTest.cs": "csharp", "Api.Tests/Helper.cs": "csharp",
        "tests/UnitTests/Builder.cs": "csharp",
    }
    assert {path: kind_of_test(path) for path in tests} == tests
    plain = ["src/lib.rs", "crates/x/src/tests.rsx", "app/models/user.rb", "Rakefile.rake", "src/Foo.php",
             "src/main/java/a/Foo.java", "build.gradle.kts", "src/Contest.cs", "src/Api/Program.cs"]
    assert [kind_of_test(path) for path in plain] == [None] * len(plain)
    assert has_inline_tests("fn f() {}\n#[cfg(test)]\nmod tests {}\n")
    assert has_inline_tests("#[tokio::test]\nasync fn t() {}\n") and has_inline_tests("#[ test ]\nfn t() {}\n")
    assert not has_inline_tests("// a test helper\nfn test() {}\n#[cfg(not(test))]\nfn f() {}\n")
    assert subject_names("jvm", "FooTestCase.java") == ["Foo.java", "Foo.kt"]
    assert subject_names("ruby", "test_foo.rb") == subject_names("ruby", "foo_spec.rb") == ["foo.rb"]
    assert subject_names("csharp", "FooTests.cs") == ["Foo.cs"] and subject_names("php", "Test.php") == []


FILES: dict[str, str] = {
    **LANG_FILES,
    # Rust: a library with inline unit tests (it covers itself), and an integration test of that crate
    "src/lib.rs": "pub fn parse(s: &str) { serde_json::from_str::<u8>(s).ok(); }\n\n#[cfg(test)]\nmod tests {\n"
                  "    #[test]\n    fn it() { super::parse(\"1\"); }\n}\n",
    "tests/cli.rs": "use regex_automata::meta::Regex;\n\n#[test]\n"
                    "fn t() { Regex::new(\"a\").ok(); app::parse(\"1\"); }\n",
    # Ruby: a spec mirroring app/page.rb, and a minitest test using nokogiri itself
    "spec/page_spec.rb": "require 'rspec'\n\nRSpec.describe 'page' do\n  it { expect(1).to eq(1) }\nend\n",
    "test/test_direct.rb": "require 'minitest/autorun'\nrequire 'nokogiri'\n\nNokogiri::XML('<a/>')\n",
    # PHP: tests/Unit/AuditTest.php → src/Audit.php
    "src/Audit.php": "<?php\nnamespace App;\nuse Monolog\\Logger;\n"
                     "class Audit { function l() { return new Logger('a'); } }\n",
    "tests/Unit/AuditTest.php": "<?php\nuse PHPUnit\\Framework\\TestCase;\nclass AuditTest extends TestCase {}\n",
    # Java/Kotlin: the mirror path, a first-party import, and a Kotlin test using jackson itself
    "src/test/java/a/AppTest.java": "package a;\nimport org.junit.jupiter.api.Test;\n"
                                    "class AppTest { @Test void t() {} }\n",
    "src/test/java/b/UsesAppIT.java": "package b;\nimport a.App;\nclass UsesAppIT {}\n",
    "src/test/kotlin/a/JsonTest.kt": "package a\nimport com.fasterxml.jackson.databind.ObjectMapper\n"
                                     "import kotlin.test.Test\n"
                                     "class JsonTest { @Test fun t() { ObjectMapper.builder() } }\n",
    # C#: a Foo.Tests project mirroring svc/, xunit by its using; mstest by its attributes alone
    "svc.Tests/ProgramTests.cs": "using Xunit;\npublic class ProgramTests { [Fact] public void T() {} }\n",
    "svc.Tests/Other.cs": "[TestClass]\npublic class Other { [TestMethod] public void T() {} }\n",
}


def _files(context: Any) -> dict[str, tuple[str, list[str], list[str]]]:
    return {f.path: (f.framework, f.modules, f.covers) for f in context.tests.files}


def test_each_language_finds_its_tests_and_what_they_cover(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    context = gather(repo, probes=[probe() for probe in PROBES])
    assert _files(context) == {
        "spec/page_spec.rb": ("rspec", ["app/page.rb", "rspec"], ["app/page.rb:1", "app/page.rb:4", "app/page.rb:5"]),
        "src/lib.rs": ("cargo-test", [], ["src/lib.rs:1"]),  # inline tests cover the file itself
        "src/test/java/a/AppTest.java": ("junit", ["org.junit.jupiter.api.Test", "src/main/java/a/App.java"],
                                         ["src/main/java/a/App.java:2", "src/main/java/a/App.java:4"]),
        "src/test/java/b/UsesAppIT.java": ("junit", ["a.App", "src/main/java/a/App.java"],  # by its import
                                           ["src/main/java/a/App.java:2", "src/main/java/a/App.java:4"]),
        "src/test/kotlin/a/JsonTest.kt": ("kotlin-test", ["com.fasterxml.jackson.databind.ObjectMapper"], []),
        "svc.Tests/Other.cs": ("mstest", [], []),
        "svc.Tests/ProgramTests.cs": ("xunit", ["Xunit", "svc/Program.cs"], ["svc/Program.cs:2", "svc/Program.cs:4"]),
        "test/test_direct.rb": ("minitest", ["minitest/autorun", "nokogiri"], []),
        "tests/Unit/AuditTest.php": ("phpunit", ["PHPUnit\\Framework\\TestCase", "src/Audit.php"],
                                     ["src/Audit.php:3", "src/Audit.php:4"]),
        "tests/cli.rs": ("cargo-test", ["regex_automata::meta::Regex", "src/lib.rs"], ["src/lib.rs:1"]),
    }
    assert context.tests.by_module == {
        "Newtonsoft.Json": ["svc.Tests/ProgramTests.cs"],
        "com.fasterxml.jackson.core:jackson-databind": [  # the Kotlin test uses it itself
            "src/test/java/a/AppTest.java", "src/test/java/b/UsesAppIT.java", "src/test/kotlin/a/JsonTest.kt"],
        "monolog/monolog": ["tests/Unit/AuditTest.php"],
        "nokogiri": ["spec/page_spec.rb", "test/test_direct.rb"],
        "rack-test": ["spec/page_spec.rb"],
        "regex-automata": ["tests/cli.rs"],
        "serde_json": ["src/lib.rs", "tests/cli.rs"],
    }


def test_an_edited_spec_and_java_test_update_as_a_full_gather(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    session = Session(repo)  # asserts at each step that the incremental output is the full combine's
    write_files(repo, {"spec/page_spec.rb": "\n\nNokogiri::HTML('x')\n" + FILES["spec/page_spec.rb"],
                       "src/test/java/a/AppTest.java": "package a;\nimport org.testng.annotations.Test;\n"
                                                       "import a.App;\nclass AppTest {}\n"})
    commit_all(repo)
    found = session.step()["tests"]
    assert found is not None  # updated, not recombined
    files = {e["path"]: e for e in found.values["tests"]["files"]}
    assert list(files["spec/page_spec.rb"]["covers"]) == ["app/page.rb:1", "app/page.rb:4", "app/page.rb:5"]
    assert files["src/test/java/a/AppTest.java"]["framework"] == "testng"
    # a subject edited: its tests' covers move with its lines
    write_files(repo, {"app/page.rb": "\n" + LANG_FILES["app/page.rb"], "src/Audit.php": FILES["src/Audit.php"] + "\n"})
    commit_all(repo)
    found = session.step()["tests"]
    assert found is not None
    files = {e["path"]: e for e in found.values["tests"]["files"]}
    assert list(files["spec/page_spec.rb"]["covers"]) == ["app/page.rb:2", "app/page.rb:5", "app/page.rb:6"]
    # a Rust file gaining inline tests becomes a test that covers itself
    write_files(repo, {"src/main.rs": LANG_FILES["src/main.rs"] + "\n#[test]\nfn t() {}\n"})
    commit_all(repo)
    found = session.step()["tests"]
    assert found is not None
    assert "src/main.rs" in {e["path"] for e in found.values["tests"]["files"]}


# --- a real tree ---------------------------------------------------------------------------------------------------


def _corpus(tmp_path: Path, name: str) -> Path:
    tarball = CORPUS / f"{name}.tar.gz"
    if not tarball.is_file():
        pytest.skip(f"the real-world corpus is absent ({tarball})")
    with tarfile.open(tarball) as tar:
        tar.extractall(tmp_path, filter="data")
    repo = tmp_path / name
    for step in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "c"]):
        subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *step], cwd=repo, check=True,
                       capture_output=True)
    return repo


def test_spring_petclinic_tests_cover_their_controllers(tmp_path: Path) -> None:
    context = gather(_corpus(tmp_path, "spring-petclinic"), probes=[probe() for probe in PROBES])
    files = _files(context)
    assert len(files) >= 15 and {framework for framework, _, _ in files.values()} == {"junit"}
    base = "src/{}/java/org/springframework/samples/petclinic/owner/{}.java"
    _, modules, covers = files[base.format("test", "OwnerControllerTests")]
    assert base.format("main", "OwnerController") in modules
    assert covers and all(c.startswith(base.format("main", "OwnerController") + ":") for c in covers)
    assert base.format("test", "OwnerControllerTests") in context.tests.by_module[
        "org.springframework.boot:spring-boot-starter-validation"]


# --- the remediation report ----------------------------------------------------------------------------------------

GEMFILE = 'source "https://rubygems.org"\n\ngem "pg", "1.4.5"\n'
GEMFILE_LOCK = ("GEM\n  remote: https://rubygems.org/\n  specs:\n    pg (1.4.5)\n\nPLATFORMS\n  ruby\n\n"
                "DEPENDENCIES\n  pg (= 1.4.5)\n\nBUNDLED WITH\n   2.4.10\n")


def test_the_remediation_report_names_the_spec_covering_the_gem(home: Path, make_repo: Callable[..., Path],
                                                                 tmp_path: Path) -> None:
    repo = make_repo({"Gemfile": GEMFILE, "Gemfile.lock": GEMFILE_LOCK,
                      "lib/store.rb": "require 'pg'\n\ndef connect\n  PG.connect(dbname: 'app')\nend\n",
                      "spec/store_spec.rb": "require_relative '../lib/store'\n\nRSpec.describe 'store' do\n"
                                            "  it { connect }\nend\n"})
    advisories = tmp_path / "advisories"
    advisories.mkdir()
    record = {"id": "GHSA-pgpg-0000-0001", "modified": "2024-01-01T00:00:00Z", "summary": "pg bug",
              "affected": [{"package": {"ecosystem": "RubyGems", "name": "pg"},
                            "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "1.4.6"}]}]}]}
    (advisories / "GHSA-pgpg-0000-0001.json").write_text(json.dumps(record))
    state = dispatch(Settings.from_env(), "vulnerability-remediation", repo, {}, {"advisories": str(advisories)})
    assert state["outcomes"], state.get("error")
    item = state["outcomes"][0]
    assert item["covering_tests"] == ["spec/store_spec.rb"]
    report = item["report"]
    tests_part = report.split("#### Tests covering them")[1]
    assert "`spec/store_spec.rb`" in tests_part and "none found" not in tests_part.split("####")[0]
