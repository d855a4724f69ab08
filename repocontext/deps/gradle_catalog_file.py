"""A Gradle version catalog (gradle/libs.versions.toml) as dependency records: its libraries (read by
gradle_catalog.py) with the build files' use of them (gradle.py) telling which only tests use."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from repocontext.deps.common import Issue, Parsed
from repocontext.deps.gradle import catalog_usage
from repocontext.deps.gradle_catalog import ECOSYSTEM, accessor, dev_configuration, is_default_catalog, libraries
from repocontext.model import Dependency


def parse_catalog(path: str, text: str, texts: Mapping[str, str | None] | None = None) -> Parsed:
    """The libraries of a version catalog under gradle/ as records; `texts` holds the build files that say
    which are used only by tests."""
    if not is_default_catalog(path):
        return Parsed()
    found = libraries(text, path)
    if isinstance(found, Parsed):
        return found
    root = posixpath.dirname(posixpath.dirname(path))
    usage = catalog_usage(root, texts or {})
    result = Parsed()
    for library in found:
        if library.version is None:
            continue
        configs = usage.get(accessor(library.alias), set())
        dev = bool(configs) and all(dev_configuration(c) for c in configs)
        result.deps.append(Dependency(
            ecosystem=ECOSYSTEM, name=library.name, version=library.version if _exact(library.version) else None,
            constraint=library.version, dev=dev, file=path, line=library.line or None,
            section="versions" if library.ref else "libraries"))
    versionless = [lib for lib in found if lib.version is None]
    if versionless:
        boms = sorted({lib.name for lib in found if lib.name.endswith(("-bom", "-bom-alpha", "-dependencies"))})
        by = f" (a platform sets it: {', '.join(boms)})" if boms else " (a platform or plugin sets it)"
        result.issues.append(Issue(
            f"{len(versionless)} libraries of this catalog have no version here{by}: their versions are unknown "
            "here, so no advisory is matched against them", path, None, "info"))
    return result


def _exact(version: str) -> bool:
    """A plain version, not a range (`[1.0,2.0)`) or a dynamic one (`1.+`, `latest.release`)."""
    return not any(c in version for c in "[](),+") and not version.startswith("latest.")
