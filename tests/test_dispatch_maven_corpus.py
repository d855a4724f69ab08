"""vulnerability-remediation on real Maven and Gradle trees through the real CLI, with real GitHub advisories
(tests/fixtures/advisories/Maven): spring-petclinic (a pom with a Spring Boot parent outside the repository and
`${property}` versions; a build.gradle with `ext` variables) and nowinandroid (a Gradle version catalog read by
40 Kotlin build scripts). As published, neither tree pins a version these advisories affect: the runs say
there is nothing to do and leave nothing "not evaluated". Each tree is then given one vulnerable pin the way
its own files write versions (a `<properties>` entry, a `[versions]` entry, an `ext` variable) and must get the
lowest unaffected version in the same release line, as a patch `git apply --check` accepts."""

from __future__ import annotations

import subprocess
from pathlib import Path

from corpus_dispatch import GIT, assert_applies, corpus_tree, dispatch_json

ADVISORIES = Path(__file__).parent / "fixtures" / "advisories" / "Maven"



def _change(repo: Path, path: str, old: str, new: str) -> None:
    file = repo / path
    text = file.read_text()
    assert text.count(old) == 1, old
    file.write_text(text.replace(old, new))
    subprocess.run([*GIT, "commit", "-qam", "pin"], cwd=repo, check=True, capture_output=True)


def _dispatch(repo: Path, *args: str) -> tuple[int, dict, str]:
    return dispatch_json(repo, ADVISORIES, *args)



def test_petclinic_as_published_says_what_it_could_not_check(tmp_path: Path, home: Path) -> None:
    repo = corpus_tree(tmp_path, "spring-petclinic.tar.gz")
    code, result, err = _dispatch(repo)
    # the Spring Boot parent (outside the repository) sets most versions: not green, and said per file
    assert code == 2 and result["status"] == "not_evaluated", err
    pom = next(line for line in result["not_evaluated"] if line.startswith("not evaluated: pom.xml ("))
    assert pom.startswith("not evaluated: pom.xml (21 Maven packages whose version a parent POM, BOM or platform "
                          "outside the repository sets: com.github.ben-manes.caffeine:caffeine, ")
    report = Path(result["report_path"]).read_text()
    assert f"- {pom}" in report


def test_petclinic_property_pin_is_moved_at_its_property(tmp_path: Path, home: Path) -> None:
    repo = corpus_tree(tmp_path, "spring-petclinic.tar.gz")
    locator = "    <webjars-locator.version>1.1.3</webjars-locator.version>\n"
    _change(repo, "pom.xml", locator, locator + "    <log4j2.version>2.14.1</log4j2.version>\n")
    _change(repo, "pom.xml", "    <dependency>\n      <groupId>javax.cache</groupId>",
            "    <dependency>\n      <groupId>org.apache.logging.log4j</groupId>\n      <artifactId>log4j-core"
            "</artifactId>\n      <version>${log4j2.version}</version>\n    </dependency>\n"
            "    <dependency>\n      <groupId>javax.cache</groupId>")
    code, result, err = _dispatch(repo)
    assert code == 0 and result["status"] == "succeeded", err
    item, = result["items"]
    assert (item["data"]["package"], item["data"]["installed"], item["data"]["target"]) == (
        "org.apache.logging.log4j:log4j-core", ["2.14.1"], "2.15.0")
    assert item["data"]["advisories"] == ["GHSA-jfh8-c2jp-5v3q"]
    assert_applies(repo, result["patch"])
    assert ("-    <log4j2.version>2.14.1</log4j2.version>\n+    <log4j2.version>2.15.0</log4j2.version>"
            in result["patch"])
    assert result["patch"].count("\n+    <") == 1  # the dependency's `${log4j2.version}` line is left


def test_petclinic_gradle_variable_pin(tmp_path: Path, home: Path) -> None:
    repo = corpus_tree(tmp_path, "spring-petclinic.tar.gz")
    _change(repo, "build.gradle", 'ext.webjarsBootstrapVersion = "5.3.8"\n',
            'ext.webjarsBootstrapVersion = "5.3.8"\next.protobufVersion = "3.21.7"\n')
    h2 = "  runtimeOnly 'com.h2database:h2'\n"
    _change(repo, "build.gradle", h2, h2 + '  implementation "com.google.protobuf:protobuf-java:${protobufVersion}"\n')
    code, result, err = _dispatch(repo, "--input", "package=com.google.protobuf:protobuf-java")
    assert code == 0 and result["status"] == "succeeded", err
    item, = result["items"]
    assert (item["data"]["installed"], item["data"]["target"]) == (["3.21.7"], "3.25.5")
    assert_applies(repo, result["patch"])
    assert '+ext.protobufVersion = "3.25.5"' in result["patch"]


def test_nowinandroid_as_published_names_the_platform_managed_libraries(tmp_path: Path, home: Path) -> None:
    repo = corpus_tree(tmp_path, "nowinandroid.tar.gz")
    code, result, err = _dispatch(repo)
    # Compose and Firebase BOMs (platforms outside the repository) version some libraries: those are not checked
    assert code == 2 and result["status"] == "not_evaluated", err
    assert "not evaluated: sync/work/build.gradle.kts (1 Maven package whose version a parent POM, BOM or platform " \
           "outside the repository sets: com.google.firebase:firebase-messaging)" in result["not_evaluated"]


def test_nowinandroid_catalog_pin_in_the_same_release_line(tmp_path: Path, home: Path) -> None:
    repo = corpus_tree(tmp_path, "nowinandroid.tar.gz")
    _change(repo, "gradle/libs.versions.toml", 'protobuf = "4.29.2"', 'protobuf = "4.28.1"')
    code, result, err = _dispatch(repo, "--input", "package=com.google.protobuf:protobuf-kotlin-lite")
    assert code == 0 and result["status"] == "succeeded", err
    item, = result["items"]
    assert (item["data"]["installed"], item["data"]["target"]) == (["4.28.1"], "4.28.2")  # not 3.25.5, not 4.27.5
    assert_applies(repo, result["patch"])
    assert '-protobuf = "4.28.1"\n+protobuf = "4.28.2"' in result["patch"]
    assert result["patch"].count("+++ ") == 1  # the build scripts' `libs.protobuf.kotlin.lite` are left
