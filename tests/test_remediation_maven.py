"""Maven and Gradle upgrade plans: the version text on the line that holds it changes and nothing else, a Maven
range keeps its upper bound, a record that only uses a version written elsewhere is left with a note, a
gradle.lockfile is regenerated (never edited) and a transitive package gets the override that pins it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli

from repocontext.deps.gradle import parse_gradle
from repocontext.deps.gradle_catalog_file import parse_catalog
from repocontext.deps.gradle_lock import parse_gradle_lock
from repocontext.deps.maven import parse_pom
from subgraphs.vulnerability_remediation.edits import UpgradePlan, plan_upgrade
from subgraphs.vulnerability_remediation.ranges_maven import maven_require

ADVISORIES = Path(__file__).parent / "fixtures" / "advisories" / "Maven"


@pytest.mark.parametrize(("spec", "target", "status", "text"), [
    ("2.14.1", "2.15.0", "edited", "2.15.0"),
    ("2.17.1", "2.15.0", "fixed", "2.17.1"),
    ("2.15.0.RELEASE", "2.15.0", "fixed", "2.15.0.RELEASE"),  # RELEASE is the release itself
    ("2.15.0-rc1", "2.15.0", "edited", "2.15.0"),
    ("[2.10,3.0)", "2.15.0", "edited", "[2.15.0,3.0)"),
    ("[2.10,)", "2.15.0", "edited", "[2.15.0,)"),
    ("[2.15.0,3.0)", "2.15.0", "fixed", "[2.15.0,3.0)"),
    ("(2.15.0,3.0)", "2.15.0", "fixed", "(2.15.0,3.0)"),
    ("[2.14.1]", "2.15.0", "edited", "[2.15.0]"),
    ("[2.10,2.15.0]", "2.15.0", "edited", "[2.15.0,2.15.0]"),
    ("[2.10,2.15)", "2.15.0", "unsupported", "[2.10,2.15)"),
    ("[1.0,2.0),[3.0,4.0)", "2.15.0", "unsupported", "[1.0,2.0),[3.0,4.0)"),
    ("2.+", "2.15.0", "loose", "2.+"),
    ("1.+", "2.15.0", "unsupported", "1.+"),
    ("latest.release", "2.15.0", "loose", "latest.release"),
])
def test_maven_requirement_rule(spec: str, target: str, status: str, text: str) -> None:
    result = maven_require(spec, target)
    assert (result.status, result.text) == (status, text)


def _reader(files: dict[str, str]) -> Callable[[str], str | None]:
    return files.get


POM = """<project>
  <groupId>g</groupId>
  <artifactId>a</artifactId>
  <version>1</version>
  <properties>
    <log4j2.version>2.14.1</log4j2.version>
  </properties>
  <dependencies>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-core</artifactId>
      <version>${log4j2.version}</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-api</artifactId>
      <version>2.14.1</version>
    </dependency>
    <dependency>
      <groupId>org.yaml</groupId>
      <artifactId>snakeyaml</artifactId>
    </dependency>
  </dependencies>
</project>
"""


def test_a_pom_moves_the_property_and_the_literal_and_notes_the_rest() -> None:
    files = {"pom.xml": POM}
    deps = parse_pom("pom.xml", POM, files).deps
    core = plan_upgrade("Maven", "org.apache.logging.log4j:log4j-core", "2.15.0", deps, _reader(files))
    assert [(e.file, e.line, e.old, e.new) for e in core.edits] == [
        ("pom.xml", 6, "<log4j2.version>2.14.1</log4j2.version>", "<log4j2.version>2.15.0</log4j2.version>")]
    assert not core.skipped and any("`${log4j2.version}`" in n for n in core.notes)
    shared = POM.replace("<version>2.14.1</version>", "<version>${log4j2.version}</version>")
    both = plan_upgrade("Maven", "org.apache.logging.log4j:log4j-core", "2.15.0",
                        parse_pom("pom.xml", shared, {"pom.xml": shared}).deps, _reader({"pom.xml": shared}))
    assert any("the property log4j2.version is read 2 times" in n for n in both.notes)
    api = plan_upgrade("Maven", "org.apache.logging.log4j:log4j-api", "2.15.0", deps, _reader(files))
    assert [(e.line, e.old, e.new) for e in api.edits] == [(17, "<version>2.14.1</version>",
                                                            "<version>2.15.0</version>")]
    yaml = plan_upgrade("Maven", "org.yaml:snakeyaml", "1.33", deps, _reader(files))
    assert yaml.edits == [] and not yaml.skipped
    hint = " ".join(yaml.notes)
    assert ("<dependencyManagement><dependencies><dependency><groupId>org.yaml</groupId><artifactId>snakeyaml"
            "</artifactId><version>1.33</version></dependency></dependencies></dependencyManagement>") in hint
    nobody = plan_upgrade("Maven", "com.google.guava:guava", "32.0.0-jre", deps, _reader(files))
    assert "<artifactId>guava</artifactId><version>32.0.0-jre</version>" in nobody.skipped[0]


GRADLE = """ext.guavaVersion = '30.0-jre'
dependencies {
  implementation 'org.apache.logging.log4j:log4j-core:2.14.1'
  implementation "com.google.guava:guava:${guavaVersion}"
  api group: 'commons-io', name: 'commons-io', version: '2.6'
  implementation(libs.okhttp)
}
"""
CATALOG = """[versions]
okhttp = "4.9.0"

[libraries]
okhttp = { module = "com.squareup.okhttp3:okhttp", version.ref = "okhttp" }
mockwebserver = { module = "com.squareup.okhttp3:mockwebserver", version.ref = "okhttp" }
inject = { module = "javax.inject:javax.inject", version = "1" }
junit = "junit:junit:4.12"
"""
LOCK = "com.squareup.okhttp3:okhttp:4.9.0=runtimeClasspath\ncom.squareup.okio:okio:2.8.0=runtimeClasspath\n"


def _gradle_plan(package: str, target: str) -> UpgradePlan:
    files = {"build.gradle": GRADLE, "gradle/libs.versions.toml": CATALOG, "gradle.lockfile": LOCK}
    deps = [*parse_gradle("build.gradle", GRADLE, files).deps,
            *parse_catalog("gradle/libs.versions.toml", CATALOG, files).deps,
            *parse_gradle_lock("gradle.lockfile", LOCK, {"com.squareup.okhttp3:okhttp": False}).deps]
    return plan_upgrade("Maven", package, target, deps, _reader(files))


def test_gradle_coordinates_variables_and_map_notation_are_edited_in_place() -> None:
    log4j = _gradle_plan("org.apache.logging.log4j:log4j-core", "2.15.0")
    assert [(e.line, e.old, e.new) for e in log4j.edits] == [
        (3, "org.apache.logging.log4j:log4j-core:2.14.1", "org.apache.logging.log4j:log4j-core:2.15.0")]
    guava = _gradle_plan("com.google.guava:guava", "32.0.0-jre")
    assert [(e.line, e.old, e.new) for e in guava.edits] == [(1, "= '30.0-jre'", "= '32.0.0-jre'")]
    commons = _gradle_plan("commons-io:commons-io", "2.7")
    assert [(e.line, e.old, e.new) for e in commons.edits] == [(5, "version: '2.6'", "version: '2.7'")]


def test_a_catalog_version_is_edited_once_and_the_lockfile_regenerated() -> None:
    plan = _gradle_plan("com.squareup.okhttp3:okhttp", "4.9.2")
    assert [(e.file, e.line, e.old, e.new) for e in plan.edits] == [
        ("gradle/libs.versions.toml", 2, '"4.9.0"', '"4.9.2"')]
    assert any("shared: com.squareup.okhttp3:mockwebserver moves to 4.9.2" in n for n in plan.notes)
    assert [(a.file, a.command) for a in plan.regenerate] == [("gradle.lockfile", "gradle dependencies --write-locks")]
    assert not plan.skipped


def test_a_transitive_gradle_package_gets_a_constraints_line() -> None:
    plan = _gradle_plan("com.squareup.okio:okio", "3.4.0")
    assert plan.edits == [] and [a.command for a in plan.regenerate] == ["gradle dependencies --write-locks"]
    assert 'constraints { implementation("com.squareup.okio:okio:3.4.0") }' in plan.skipped[0]


def test_catalog_inline_versions() -> None:
    inject = _gradle_plan("javax.inject:javax.inject", "2")
    assert [(e.line, e.old, e.new) for e in inject.edits] == [(7, 'version = "1"', 'version = "2"')]
    junit = _gradle_plan("junit:junit", "4.13.1")
    assert [(e.line, e.old, e.new) for e in junit.edits] == [(8, "junit:junit:4.12", "junit:junit:4.13.1")]


def test_a_gradle_lockfile_run_names_its_regeneration(home: Path, make_repo: Callable[..., Path]) -> None:
    catalog = CATALOG.replace('okhttp = "4.9.0"', 'okhttp = "4.9.0"\nprotobuf = "3.21.7"').replace(
        "[libraries]\n", '[libraries]\nprotobuf = { module = "com.google.protobuf:protobuf-java", '
                         'version.ref = "protobuf" }\n')
    repo = make_repo({"gradle/libs.versions.toml": catalog, "settings.gradle.kts": "include(\":app\")\n",
                      "app/build.gradle.kts": "dependencies {\n  implementation(libs.protobuf)\n}\n",
                      "app/gradle.lockfile": "com.google.protobuf:protobuf-java:3.21.7=runtimeClasspath\n"})
    done = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(ADVISORIES),
                   "--json", env={"PLANNER_DAEMON": "off"})
    assert "Traceback" not in done.stderr
    result = json.loads(done.stdout)
    assert done.returncode == 7 and result["status"] == "needs_regeneration", done.stderr
    assert '+protobuf = "3.25.5"' in result["patch"]
    assert "gradle dependencies --write-locks" in done.stdout


SHARED = """<project>
  <groupId>g</groupId>
  <artifactId>a</artifactId>
  <version>1</version>
  <properties>
    <protobuf.version>3.21.7</protobuf.version>
  </properties>
  <dependencies>
    <dependency>
      <groupId>com.google.protobuf</groupId>
      <artifactId>protobuf-java</artifactId>
      <version>${protobuf.version}</version>
    </dependency>
    <dependency>
      <groupId>com.google.protobuf</groupId>
      <artifactId>protobuf-kotlin</artifactId>
      <version>${protobuf.version}</version>
    </dependency>
  </dependencies>
</project>
"""


def test_two_vulnerable_artifacts_sharing_one_property_make_one_edit(home: Path,
                                                                    make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"pom.xml": SHARED})
    done = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(ADVISORIES),
                   "--json", env={"PLANNER_DAEMON": "off"})
    result = json.loads(done.stdout)
    assert done.returncode == 0 and result["status"] == "succeeded", done.stderr
    assert [(i["data"]["package"], i["status"]) for i in result["items"]] == [
        ("com.google.protobuf:protobuf-java", "succeeded"), ("com.google.protobuf:protobuf-kotlin", "succeeded")]
    assert result["patch"].count("+    <protobuf.version>3.25.5</protobuf.version>") == 1
