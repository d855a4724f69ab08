"""gradle.lockfile: the versions Gradle's dependency locking resolved, one `group:artifact:version=confs` line each.

The file names no edges, so a chain from a direct dependency cannot be told: a package is direct when the
build scripts beside the lockfile declare it (a catalog accessor counts: its record names the library), and
transitive otherwise. Dev when every configuration that resolves it is a test one (testCompileClasspath,
debugUnitTestRuntimeClasspath, androidTest...). `empty=` lists configurations that resolved nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from repocontext.deps.common import Issue, Parsed
from repocontext.model import Dependency

ECOSYSTEM = "Maven"
_LINE = re.compile(r"^(?P<group>[^:=\s#]+):(?P<artifact>[^:=\s]+):(?P<version>[^:=\s]+)=(?P<confs>\S*)\s*$")
_TEST_CONF = re.compile(r"(?:^test|Test)[A-Z]|^androidTest|^testFixtures")


def test_configuration(name: str) -> bool:
    return bool(_TEST_CONF.search(name))


def parse_gradle_lock(path: str, text: str, declared: Mapping[str, bool] | None = None) -> Parsed:
    result = Parsed()
    if declared is None:
        result.issues.append(Issue("no build script beside this lockfile declares dependencies; every locked "
                                   "package is counted as transitive", path, None, "info"))
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("empty="):
            continue
        match = _LINE.match(line)
        if match is None:
            result.issues.append(Issue(f"unreadable lockfile line {line[:80]!r}", path, number))
            continue
        name = f"{match.group('group')}:{match.group('artifact')}"
        confs = [c for c in match.group("confs").split(",") if c]
        direct = declared is not None and name in declared
        result.deps.append(Dependency(
            ecosystem=ECOSYSTEM, name=name, version=match.group("version"), direct=direct,
            dev=bool(confs) and all(test_configuration(c) for c in confs), file=path, line=number,
            kind="lockfile", section=",".join(confs) or None))
    return result
