"""pom.xml, build.gradle(.kts), gradle/libs.versions.toml and gradle.lockfile records: names, versions, the line
that holds each version, dev and direct, through the parsers and through a gather of a real git repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

from repocontext.deps.files import classify
from repocontext.deps.gradle import parse_gradle
from repocontext.deps.gradle_catalog_file import parse_catalog
from repocontext.deps.gradle_lock import parse_gradle_lock
from repocontext.deps.maven import parse_pom
from repocontext.gather import gather
from repocontext.probes.dependencies import DependenciesProbe

PARENT = """<?xml version="1.0"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>parent</artifactId>
  <version>1.0.0</version>
  <packaging>pom</packaging>
  <properties>
    <jackson.version>2.9.10</jackson.version>
    <log4j2.version>2.14.1</log4j2.version>
  </properties>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>com.fasterxml.jackson.core</groupId>
        <artifactId>jackson-databind</artifactId>
        <version>${jackson.version}</version>
      </dependency>
      <dependency>
        <groupId>com.example</groupId>
        <artifactId>bom</artifactId>
        <version>1.0.0</version>
        <type>pom</type>
        <scope>import</scope>
      </dependency>
    </dependencies>
  </dependencyManagement>
</project>
"""
BOM = """<project>
  <groupId>com.example</groupId>
  <artifactId>bom</artifactId>
  <version>1.0.0</version>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>org.yaml</groupId>
        <artifactId>snakeyaml</artifactId>
        <version>1.33</version>
      </dependency>
    </dependencies>
  </dependencyManagement>
</project>
"""
CHILD = """<project>
  <parent>
    <groupId>com.example</groupId>
    <artifactId>parent</artifactId>
    <version>1.0.0</version>
  </parent>
  <artifactId>app</artifactId>
  <dependencies>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-core</artifactId>
      <version>${log4j2.version}</version>
    </dependency>
    <dependency>
      <groupId>com.fasterxml.jackson.core</groupId>
      <artifactId>jackson-databind</artifactId>
    </dependency>
    <dependency>
      <groupId>org.yaml</groupId>
      <artifactId>snakeyaml</artifactId>
    </dependency>
    <dependency>
      <groupId>junit</groupId>
      <artifactId>junit</artifactId>
      <version>4.12</version>
      <scope>test</scope>
    </dependency>
    <dependency>
      <groupId>org.springframework</groupId>
      <artifactId>spring-core</artifactId>
      <version>[5.3.0,6.0)</version>
    </dependency>
  </dependencies>
</project>
"""
TEXTS = {"pom.xml": PARENT, "bom/pom.xml": BOM, "app/pom.xml": CHILD}


def _brief(deps: list) -> list[tuple]:
    return [(d.name, d.version, d.constraint, d.file, d.line, d.dev, d.direct, d.kind) for d in deps]


def test_a_child_pom_reads_its_parents_properties_management_and_bom() -> None:
    got = _brief(parse_pom("app/pom.xml", CHILD, TEXTS).deps)
    assert got == [
        ("org.apache.logging.log4j:log4j-core", "2.14.1", "2.14.1", "pom.xml", 10, False, True, "manifest"),
        ("org.apache.logging.log4j:log4j-core", None, "${log4j2.version}", "app/pom.xml", 12, False, True, "manifest"),
        ("com.fasterxml.jackson.core:jackson-databind", "2.9.10", "2.9.10", "pom.xml", 9, False, True, "manifest"),
        ("com.fasterxml.jackson.core:jackson-databind", None, None, "app/pom.xml", 16, False, True, "manifest"),
        ("org.yaml:snakeyaml", "1.33", "1.33", "bom/pom.xml", 10, False, True, "manifest"),
        ("org.yaml:snakeyaml", None, None, "app/pom.xml", 20, False, True, "manifest"),
        ("junit:junit", "4.12", "4.12", "app/pom.xml", 25, True, True, "manifest"),
        ("org.springframework:spring-core", None, "[5.3.0,6.0)", "app/pom.xml", 31, False, True, "manifest"),
    ]


def test_a_parent_pom_records_its_managed_versions_as_constraints() -> None:
    got = _brief(parse_pom("pom.xml", PARENT, TEXTS).deps)
    assert got == [
        ("com.fasterxml.jackson.core:jackson-databind", "2.9.10", "2.9.10", "pom.xml", 9, False, False, "constraint"),
        ("com.fasterxml.jackson.core:jackson-databind", None, "${jackson.version}", "pom.xml", 17, False, False,
         "constraint"),
    ]


def test_a_parent_outside_the_repository_leaves_versions_unknown_and_says_so() -> None:
    alone = parse_pom("app/pom.xml", CHILD, {})
    assert ("org.springframework.boot:x", None) not in [(d.name, d.version) for d in alone.deps]
    assert [(d.name, d.version, d.section) for d in alone.deps if d.section == "parent"] == [
        ("com.example:parent", "1.0.0", "parent")]
    issue, = alone.issues
    assert issue.level == "info" and "the parent com.example:parent:1.0.0 is not in the repository" in issue.message
    assert issue.message.startswith("3 dependencies take their version from outside the repository")


def test_broken_and_hostile_poms_are_one_issue_each() -> None:
    broken = parse_pom("pom.xml", "<project>\n  <dependencies>\n</project>\n")
    assert broken.deps == [] and [(i.level, i.line) for i in broken.issues] == [("error", 3)]
    bomb = '<?xml version="1.0"?>\n<!DOCTYPE p [<!ENTITY a "aaaa">]>\n<project>&a;</project>\n'
    refused = parse_pom("pom.xml", bomb)
    assert refused.deps == [] and "entity declarations are not allowed" in refused.issues[0].message


BUILD_GRADLE = """plugins {
  id 'org.springframework.boot' version '3.1.0'
}
ext.snakeyamlVersion = "1.33"
ext {
  guavaVersion = '30.0-jre'
}
dependencies {
  implementation 'org.apache.logging.log4j:log4j-core:2.14.1'
  implementation "org.yaml:snakeyaml:${snakeyamlVersion}"
  implementation("com.google.guava:guava:$guavaVersion")
  api group: 'commons-io', name: 'commons-io', version: '2.6'
  testImplementation 'junit:junit:4.12'
  implementation platform('org.springframework.boot:spring-boot-dependencies:3.1.0')
  implementation 'org.springframework:spring-core' // the platform sets it
  implementation(libs.okhttp)
  constraints {
    implementation("com.fasterxml.jackson.core:jackson-databind:2.9.10")
  }
}
"""
CATALOG = """[versions]
okhttp = "4.9.0"
protobuf = "3.21.7"

[libraries]
okhttp = { module = "com.squareup.okhttp3:okhttp", version.ref = "okhttp" }
protobuf-java = { group = "com.google.protobuf", name = "protobuf-java", version.ref = "protobuf" }
junit = "junit:junit:4.12"
inject = { module = "javax.inject:javax.inject", version = "1" }
bom-managed = { module = "androidx.compose.ui:ui" }
"""


def test_build_gradle_coordinates_variables_maps_platforms_and_constraints() -> None:
    parsed = parse_gradle("build.gradle", BUILD_GRADLE, {"gradle/libs.versions.toml": CATALOG})
    assert [(i.level, i.message[:51]) for i in parsed.issues] == [
        ("info", "1 dependencies have no version in this build script")]
    got = [(d.name, d.version, d.constraint, d.line, d.section, d.dev, d.kind) for d in parsed.deps]
    assert got == [
        ("org.apache.logging.log4j:log4j-core", "2.14.1", "2.14.1", 9, "implementation", False, "manifest"),
        ("org.yaml:snakeyaml", "1.33", "1.33", 4, "variables", False, "manifest"),
        ("org.yaml:snakeyaml", None, "${snakeyamlVersion}", 10, "implementation", False, "manifest"),
        ("com.google.guava:guava", "30.0-jre", "30.0-jre", 6, "variables", False, "manifest"),
        ("com.google.guava:guava", None, "$guavaVersion", 11, "implementation", False, "manifest"),
        ("commons-io:commons-io", "2.6", "2.6", 12, "api", False, "manifest"),
        ("junit:junit", "4.12", "4.12", 13, "testImplementation", True, "manifest"),
        ("org.springframework.boot:spring-boot-dependencies", "3.1.0", "3.1.0", 14, "implementation", False,
         "manifest"),
        ("org.springframework:spring-core", None, None, 15, "implementation", False, "manifest"),
        ("com.squareup.okhttp3:okhttp", None, "libs.okhttp", 16, "implementation", False, "manifest"),
        ("com.fasterxml.jackson.core:jackson-databind", "2.9.10", "2.9.10", 18, "implementation", False,
         "constraint"),
    ]


def test_the_catalog_records_the_line_that_holds_each_version_and_reads_dev_from_the_build() -> None:
    texts = {"app/build.gradle.kts": "dependencies {\n  testImplementation(libs.protobuf.java)\n"
                                     "  implementation(libs.okhttp)\n}\n"}
    parsed = parse_catalog("gradle/libs.versions.toml", CATALOG, texts)
    got = [(d.name, d.version, d.line, d.section, d.dev) for d in parsed.deps]
    assert [(i.level, i.message.split(":")[0]) for i in parsed.issues] == [
        ("info", "1 libraries of this catalog have no version here (a platform or plugin sets it)")]
    assert got == [("javax.inject:javax.inject", "1", 9, "libraries", False),
                   ("junit:junit", "4.12", 8, "libraries", False),
                   ("com.squareup.okhttp3:okhttp", "4.9.0", 2, "versions", False),
                   ("com.google.protobuf:protobuf-java", "3.21.7", 3, "versions", True)]
    assert parse_catalog("other/libs.versions.toml", CATALOG).deps == []  # only gradle/'s is Gradle's default
    assert classify("gradle/libs.versions.toml") == ("gradle", "Maven", "manifest")
    assert classify("docs/libs.versions.toml") is None


LOCKFILE = """# This is a Gradle generated file for dependency locking.
com.squareup.okhttp3:okhttp:4.9.0=compileClasspath,runtimeClasspath
com.squareup.okio:okio:2.8.0=compileClasspath,runtimeClasspath
junit:junit:4.12=testCompileClasspath,testRuntimeClasspath
empty=annotationProcessor
"""


def test_gradle_lockfile_direct_from_the_build_dev_from_test_configurations() -> None:
    got = [(d.name, d.version, d.line, d.direct, d.dev) for d in
           parse_gradle_lock("gradle.lockfile", LOCKFILE, {"com.squareup.okhttp3:okhttp": False}).deps]
    assert got == [("com.squareup.okhttp3:okhttp", "4.9.0", 2, True, False),
                   ("com.squareup.okio:okio", "2.8.0", 3, False, False),
                   ("junit:junit", "4.12", 4, False, True)]
    alone = parse_gradle_lock("gradle.lockfile", "a:b:1=x\nnot a line\n", None)
    assert [i.line for i in alone.issues] == [None, 2]


def test_a_gather_reads_maven_and_gradle_files_together(tmp_path: Path) -> None:
    files = {**TEXTS, "android/build.gradle.kts": "dependencies {\n  implementation(libs.okhttp)\n}\n",
             "android/gradle/libs.versions.toml": CATALOG, "android/gradle.lockfile": LOCKFILE}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run([*git, *args], cwd=tmp_path, check=True)
    deps = gather(tmp_path, probes=[DependenciesProbe()]).dependencies
    log4j = [(d.file, d.line, d.version) for d in deps["org.apache.logging.log4j:log4j-core"]]
    assert log4j == [("app/pom.xml", 12, None), ("pom.xml", 10, "2.14.1")]
    okhttp = [(d.file, d.line, d.version, d.direct, d.kind) for d in deps["com.squareup.okhttp3:okhttp"]]
    assert okhttp == [("android/build.gradle.kts", 2, None, True, "manifest"),
                      ("android/gradle.lockfile", 2, "4.9.0", True, "lockfile"),  # declared beside it
                      ("android/gradle/libs.versions.toml", 2, "4.9.0", True, "manifest")]
    assert [d.direct for d in deps["com.squareup.okio:okio"]] == [False]
