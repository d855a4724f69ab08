"""pom.xml records: what `parse_pom` emits for each dependency, plugin and managed version of one pom (the
resolution of versions through properties, parents and BOMs is in `maven_pom`; its docstring says which line
each record names and why)."""

from __future__ import annotations

from dataclasses import dataclass, field

from repocontext.deps.common import Issue, Parsed
from repocontext.deps.maven_pom import Managed, Pom, Project, Repository, Texts, Where, load_pom, managed, name_of
from repocontext.deps.maven_pom import version_of as _version_of
from repocontext.deps.xml_lines import Node
from repocontext.model import Dependency

ECOSYSTEM = "Maven"
_PLUGIN_GROUP = "org.apache.maven.plugins"  # a <plugin> without <groupId>


@dataclass
class _Emitter:
    project: Project
    managed: dict[str, Managed]
    result: Parsed = field(default_factory=Parsed)
    unknown: int = 0  # dependencies whose version only a parent or BOM outside the repository knows

    @property
    def path(self) -> str:
        return self.project.chain[0].path

    def dependency(self, node: Node, section: str, dev: bool, default_group: str | None = None) -> None:
        name = name_of(node, self.project) or (f"{default_group}:{node.value('artifactId')}"
                                               if default_group and node.value("artifactId") else None)
        if name is None:
            self.result.issues.append(Issue("a dependency without groupId or artifactId", self.path, node.line))
            return
        dev = dev or node.value("scope") == "test"
        written = node.child("version")
        if written is not None and written.text:
            self._declared(node, name, written, section, dev)
            return
        entry = self.managed.get(name)
        line = _line_of(node)
        if entry is None or entry.where is None:  # managed outside the repository, or not in one place
            self.unknown += entry is None
            self._add(name, entry.version if entry else None, None, self.path, line, section, dev)
            return
        # the version is written at the managing entry (or the property it reads): the line an upgrade edits,
        # recorded as this dependency's (direct, its scope); the dependency's own line, without a version
        self._add(name, entry.version, entry.version, entry.where[0], entry.where[1], entry.section, dev)
        self._add(name, None, None, self.path, line, section, dev)

    def _declared(self, node: Node, name: str, written: Node, section: str, dev: bool) -> None:
        version, where = _version_of(node, self.project, self.path)
        self.unknown += version is None and "${" in written.text  # a property only a parent outside knows
        if "${" in written.text and where is not None and where[0:2] != (self.path, written.text_line):
            # the literal lives in a <properties> entry (here or in a parent): that is the line an upgrade edits;
            # the dependency's own line names the property and no version (one finding, at the line to edit)
            self._add(name, version, version, where[0], where[1], "properties", dev)
            version = None
        self._add(name, version if "${" in written.text or _exact(written.text) else None, written.text,
                  self.path, written.text_line, section, dev)

    def managed_entry(self, node: Node) -> None:
        name = name_of(node, self.project)
        if name is None or (node.value("scope") == "import" and node.value("type") == "pom"):
            return
        written = node.child("version")
        if written is None or not written.text:
            return
        version, where = _version_of(node, self.project, self.path)
        if "${" in written.text and where is not None and where[0:2] != (self.path, written.text_line):
            self._add(name, version, version, where[0], where[1], "properties", False, kind="constraint")
            version = None
        self._add(name, version if "${" in written.text or _exact(written.text) else None, written.text, self.path,
                  written.text_line, "dependencyManagement", False, kind="constraint")

    def _add(self, name: str, version: str | None, constraint: str | None, path: str, line: int, section: str,
             dev: bool, kind: str = "manifest") -> None:
        constraint_kind = kind == "constraint"
        self.result.deps.append(Dependency(
            ecosystem=ECOSYSTEM, name=name, version=version, constraint=constraint, direct=not constraint_kind,
            dev=dev, file=path, line=line, section=section, kind="constraint" if constraint_kind else "manifest"))


def _exact(text: str) -> bool:
    """A soft version (`1.2.3`) is the version Maven resolves; a range (`[1.0,2.0)`) is not one version."""
    return not any(c in text for c in "[](),")


def _line_of(node: Node) -> int:
    artifact = node.child("artifactId")
    return artifact.line if artifact is not None else node.line


def parse_pom(path: str, text: str, texts: Texts | None = None) -> Parsed:
    """The records of one pom.xml; `texts` (repository path → text) holds the other poms: parents and BOMs."""
    loaded = load_pom(path, text)
    if isinstance(loaded, Issue):
        return Parsed(issues=[loaded])
    repo = Repository({**(texts or {}), path: text})
    repo.poms[path] = loaded
    project = repo.project(loaded)
    emitter = _Emitter(project, managed(repo, project))
    _walk(loaded, emitter)
    if project.missing is not None and loaded.parent is not None and repo.parent_of(loaded) is None:
        _parent_record(loaded.parent, emitter)
    if emitter.unknown:
        outside = set(project.notes) | ({f"the parent {project.missing} is not in the repository"}
                                        if project.missing else set())
        where = "; ".join(sorted(outside)) or "no version is declared or managed in the repository"
        emitter.result.issues.append(Issue(
            f"{emitter.unknown} dependencies take their version from outside the repository ({where}): their "
            "versions are unknown here, so no advisory is matched against them", path, None, "info"))
    return emitter.result


def _walk(pom: Pom, emitter: _Emitter) -> None:
    root = pom.root
    _dependencies(root, "dependencies", False, emitter)
    management = root.find("dependencyManagement", "dependencies")
    for node in management.all("dependency") if management is not None else []:
        emitter.managed_entry(node)
    _plugins(root.child("build"), "build", emitter)
    profiles = root.child("profiles")
    for profile in profiles.all("profile") if profiles is not None else []:
        name = f"profiles.{profile.value('id') or '?'}"
        _dependencies(profile, f"{name}.dependencies", False, emitter)
        _plugins(profile.child("build"), f"{name}.build", emitter)


def _dependencies(parent: Node | None, section: str, dev: bool, emitter: _Emitter) -> None:
    holder = parent.child("dependencies") if parent is not None else None
    for node in holder.all("dependency") if holder is not None else []:
        emitter.dependency(node, section, dev)


def _plugins(build: Node | None, section: str, emitter: _Emitter) -> None:
    """Build plugins and their dependencies: artifacts too, run at build time only (dev)."""
    plugins = build.child("plugins") if build is not None else None
    for plugin in plugins.all("plugin") if plugins is not None else []:
        if plugin.child("version") is not None:
            emitter.dependency(plugin, f"{section}.plugins", True, default_group=_PLUGIN_GROUP)
        _dependencies(plugin, f"{section}.plugins.dependencies", True, emitter)


def _parent_record(node: Node, emitter: _Emitter) -> None:
    """A parent the repository does not hold is an artifact like any other (its version can be upgraded)."""
    version, group, artifact = node.child("version"), node.value("groupId"), node.value("artifactId")
    if version is None or not version.text or not group or not artifact:
        return
    name = f"{group}:{artifact}"
    resolved, _ = emitter.project.resolve(version.text)
    emitter.result.deps.append(Dependency(
        ecosystem=ECOSYSTEM, name=name, version=resolved, constraint=version.text, file=emitter.path,
        line=version.text_line, section="parent"))


__all__ = ["ECOSYSTEM", "Where", "parse_pom"]
