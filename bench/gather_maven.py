"""Benchmark: reading a 1,000-package gradle.lockfile, and a pom of 1,000 dependencies (budget: 100 ms in process).

A synthetic Gradle project of realistic shape: a build.gradle.kts whose 40 dependencies come from a version
catalog (gradle/libs.versions.toml, 40 libraries), and a gradle.lockfile of 1,000 packages over four
configurations (1 in 10 test-only). And a Maven project: a parent pom (properties and dependencyManagement)
with a module pom of 1,000 dependencies, a third by `${property}`, a third managed, a third literal.
Timed, best of --rounds each, wall and CPU:
- parse: `parse_gradle_lock` / `parse_pom` on the text, what a forked worker does;
- probe: the dependencies probe alone through `repocontext.gather.gather` (file index and the probe, the
  build script, catalog and lockfile parses, the records' dump), on a real git work tree.
Run: python bench/gather_maven.py [--packages N] [--rounds N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gather_common import best, print_probe
from repocontext.deps.gradle_lock import parse_gradle_lock
from repocontext.deps.maven import parse_pom

DIRECT = 40
CONFS = "compileClasspath,releaseCompileClasspath,releaseRuntimeClasspath,runtimeClasspath"


def gradle(packages: int) -> dict[str, str]:
    names = [(f"com.example.group{i % 37}", f"artifact-{i:04d}") for i in range(packages)]
    lock = ["# This is a Gradle generated file for dependency locking.", "# Manual edits can break the build "
            "and are not advised.", "# This file is expected to be part of source control."]
    for i, (group, artifact) in enumerate(sorted(names)):
        confs = "testCompileClasspath,testRuntimeClasspath" if i % 10 == 9 else CONFS
        lock.append(f"{group}:{artifact}:1.{i % 13}.{i % 7}={confs}")
    lock.append("empty=annotationProcessor")
    catalog = ["[versions]", *(f'v{i} = "1.{i % 13}.{i % 7}"' for i in range(DIRECT)), "", "[libraries]",
               *(f'lib{i} = {{ module = "{g}:{a}", version.ref = "v{i}" }}' for i, (g, a) in
                 enumerate(names[:DIRECT]))]
    build = ["plugins {", '    id("com.android.application")', "}", "", "dependencies {",
             *(f"    {'testImplementation' if i % 5 == 4 else 'implementation'}(libs.lib{i})" for i in range(DIRECT)),
             "}"]
    return {"app/build.gradle.kts": "\n".join(build) + "\n", "gradle/libs.versions.toml": "\n".join(catalog) + "\n",
            "app/gradle.lockfile": "\n".join(lock) + "\n"}


def maven(packages: int) -> dict[str, str]:
    thirds = packages // 3
    props = "".join(f"    <dep{i}.version>2.{i % 9}.{i % 4}</dep{i}.version>\n" for i in range(thirds))
    managed = "".join(f"      <dependency><groupId>org.m{i % 29}</groupId><artifactId>managed-{i}</artifactId>"
                      f"<version>3.{i % 5}</version></dependency>\n" for i in range(thirds))
    parent = ("<project>\n  <groupId>com.example</groupId>\n  <artifactId>parent</artifactId>\n"
              f"  <version>1</version>\n  <properties>\n{props}  </properties>\n"
              f"  <dependencyManagement>\n    <dependencies>\n{managed}    </dependencies>\n"
              "  </dependencyManagement>\n</project>\n")
    deps = []
    for i in range(packages):
        if i < thirds:
            deps.append(f"<groupId>org.p{i % 31}</groupId><artifactId>prop-{i}</artifactId>"
                        f"<version>${{dep{i}.version}}</version>")
        elif i < 2 * thirds:
            deps.append(f"<groupId>org.m{(i - thirds) % 29}</groupId><artifactId>managed-{i - thirds}</artifactId>")
        else:
            deps.append(f"<groupId>org.l{i % 23}</groupId><artifactId>lit-{i}</artifactId><version>4.{i % 3}"
                        f"</version><scope>{'test' if i % 4 == 0 else 'compile'}</scope>")
    body = "".join(f"    <dependency>{d}</dependency>\n" for d in deps)
    module = ("<project>\n  <parent>\n    <groupId>com.example</groupId>\n    <artifactId>parent</artifactId>\n"
              f"    <version>1</version>\n  </parent>\n  <artifactId>app</artifactId>\n  <dependencies>\n{body}"
              "  </dependencies>\n</project>\n")
    return {"pom.xml": parent, "app/pom.xml": module}




def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    files = gradle(args.packages)
    lock = files["app/gradle.lockfile"]
    records = len(parse_gradle_lock("app/gradle.lockfile", lock, {}).deps)
    wall, cpu = best(args.rounds, lambda: parse_gradle_lock("app/gradle.lockfile", lock, {}))
    print(f"gradle.lockfile: {records} packages, {len(lock) // 1024} KiB")
    print(f"  parse: {wall:.1f} ms wall, {cpu:.1f} ms CPU")
    print_probe(files, args.rounds)
    poms = maven(args.packages)
    records = len(parse_pom("app/pom.xml", poms["app/pom.xml"], poms).deps)
    wall, cpu = best(args.rounds, lambda: parse_pom("app/pom.xml", poms["app/pom.xml"], poms))
    print(f"pom.xml: {args.packages} dependencies, {records} records, "
          f"{(len(poms['pom.xml']) + len(poms['app/pom.xml'])) // 1024} KiB")
    print(f"  parse (with its parent): {wall:.1f} ms wall, {cpu:.1f} ms CPU")
    print_probe(poms, args.rounds)


if __name__ == "__main__":
    main()
