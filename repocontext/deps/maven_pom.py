"""pom.xml: a Maven project's dependencies, with versions resolved as far as the repository holds them.

Names are `groupId:artifactId`, as OSV's Maven records spell them. Maven has no lockfile: the version a pom
resolves to is the declared one (a "soft" `1.2.3` is exact), so `version` is that, and `constraint` is the
text as written (`1.2.3`, `${jackson.version}`, `[1.0,2.0)`).

Where a version comes from decides the line recorded, because that is the line an upgrade edits:
- written in the dependency: its `<version>` line;
- `${prop}`: the `<properties>` entry that holds the literal (this pom's, or a parent's in the repository),
  as a record of that file and line; the dependency's own `<version>` line is recorded too, with the
  property as its constraint and no version (so the finding names the line to edit, once);
- no version: the `<dependencyManagement>` entry that manages it (this pom's, a parent's, or a BOM imported
  with `<scope>import</scope>` that the repository holds), recorded there as this dependency, and the
  dependency's line without a version. A pom's own managed entries are also records of kind "constraint"
  (each pins the version wherever the package comes in, directly or not, and is never direct itself).
A parent is found by `<relativePath>` (default `../pom.xml`) when the pom there has the parent's coordinates,
else by coordinates among the repository's poms. A version managed by a parent or BOM the repository does not
hold (a Spring Boot starter parent) is unknown: the record has no version, and one note per pom says which
parent or BOM would tell it. Nothing is fetched.

Scope `test` is dev; so are build plugins and their dependencies (they run at build time only).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from repocontext.deps.common import Issue
from repocontext.deps.xml_lines import Node, XmlError, parse_xml

Texts = Mapping[str, str | None]
Where = tuple[str, int]  # (file, line) of a version's literal text
_PROPERTY = re.compile(r"\$\{([^}]+)\}")
_MAX_CHAIN = 12  # parents and nested properties: deeper is a cycle or not worth following


@dataclass
class Pom:
    path: str
    root: Node
    group: str | None
    artifact: str | None
    version: str | None
    parent: Node | None
    props: dict[str, tuple[str, int]] = field(default_factory=dict)  # name → (value, line)


@dataclass
class Managed:
    """One dependencyManagement entry, resolved in the pom that declares it."""

    version: str | None
    where: Where | None
    section: str  # "dependencyManagement", or "properties" when the entry reads a property


@dataclass
class Project:
    """A pom with its chain of parents in the repository, outermost last."""

    chain: list[Pom]
    missing: str | None = None  # coordinates of the first parent the repository does not hold
    texts: Texts = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def property(self, name: str) -> tuple[str, Where | None] | None:
        """The value of a property and where its literal is, following `${}` chains."""
        for _ in range(_MAX_CHAIN):
            found = self._raw(name)
            if found is None:
                return None
            value, where = found
            inner = _PROPERTY.fullmatch(value)
            if inner is None:
                return value, where
            name = inner.group(1)
        return None

    def _raw(self, name: str) -> tuple[str, Where | None] | None:
        for pom in self.chain:
            if name in pom.props:
                found, line = pom.props[name]
                return found, (pom.path, line)
        own = self.chain[0]
        parent = own.parent
        builtin: dict[str, str | None] = {
            "project.version": own.version, "pom.version": own.version, "version": own.version,
            "project.groupId": own.group, "project.artifactId": own.artifact,
            "project.parent.version": parent.value("version") if parent is not None else None,
            "project.parent.groupId": parent.value("groupId") if parent is not None else None}
        value = builtin.get(name)
        return (value, None) if value is not None else None  # the project's own coordinates: not a version to edit

    def resolve(self, text: str | None) -> tuple[str | None, Where | None]:
        """(value, where its literal is) of a version text; the value is None when a property is unknown, and
        `where` None when the text mixes properties with other text (no single place to edit)."""
        if text is None or "${" not in text:
            return text, None
        whole = _PROPERTY.fullmatch(text)
        if whole is not None:
            found = self.property(whole.group(1))
            return (found[0], found[1]) if found is not None else (None, None)
        parts: list[str] = []
        for name in _PROPERTY.findall(text):
            found = self.property(name)
            if found is None:
                return None, None
            parts.append(found[0])
        values = iter(parts)
        return _PROPERTY.sub(lambda _: next(values), text), None


def load_pom(path: str, text: str) -> Pom | Issue:
    try:
        root = parse_xml(text)
    except XmlError as exc:
        return Issue(str(exc), path, exc.line, "error")
    if root.tag != "project":
        return Issue("not a Maven pom (the root element is not <project>)", path, root.line, "warning")
    parent = root.child("parent")
    group = root.value("groupId") or (parent.value("groupId") if parent is not None else None)
    version = root.value("version") or (parent.value("version") if parent is not None else None)
    props_node = root.child("properties")
    props = {p.tag: (p.text, p.text_line) for p in props_node.children} if props_node is not None else {}
    return Pom(path, root, group, root.value("artifactId"), version, parent, props)


@lru_cache(maxsize=4096)
def _load_once(path: str, text: str) -> Pom | Issue:
    """A pom parsed once per gather however many modules read it as a parent or BOM (never mutated)."""
    return load_pom(path, text)


class Repository:
    """The repository's poms, parsed once, by path and by coordinates."""

    def __init__(self, texts: Texts) -> None:
        self.texts = texts
        self.poms: dict[str, Pom | None] = {}
        self._by_coordinates: dict[tuple[str, str], str] | None = None

    def pom(self, path: str) -> Pom | None:
        if path not in self.poms:
            text = self.texts.get(path)
            loaded = _load_once(path, text) if text is not None else None
            self.poms[path] = loaded if isinstance(loaded, Pom) else None
        return self.poms[path]

    def by_coordinates(self, group: str | None, artifact: str | None) -> Pom | None:
        if self._by_coordinates is None:
            self._by_coordinates = {}
            for path in sorted(p for p in self.texts if posixpath.basename(p) == "pom.xml"):
                pom = self.pom(path)
                if pom is not None and pom.group and pom.artifact:
                    self._by_coordinates.setdefault((pom.group, pom.artifact), path)
        found = self._by_coordinates.get((group or "", artifact or ""))
        return self.pom(found) if found is not None else None

    def parent_of(self, pom: Pom) -> Pom | None:
        node = pom.parent
        if node is None:
            return None
        group, artifact = node.value("groupId"), node.value("artifactId")
        relative = node.child("relativePath")
        wanted = "../pom.xml" if relative is None else relative.text
        if wanted:
            where = posixpath.normpath(posixpath.join(posixpath.dirname(pom.path), wanted))
            where = where if where.endswith(".xml") else posixpath.join(where, "pom.xml")
            found = self.pom(where) if not where.startswith("..") else None
            if found is not None and found.group == group and found.artifact == artifact:
                return found
        return self.by_coordinates(group, artifact)

    def project(self, pom: Pom) -> Project:
        chain, missing = [pom], None
        while len(chain) < _MAX_CHAIN:
            parent = self.parent_of(chain[-1])
            node = chain[-1].parent
            if parent is None or parent in chain:
                if node is not None and parent is None:
                    missing = _coordinates(node)
                break
            chain.append(parent)
        return Project(chain, missing, self.texts)


def _coordinates(node: Node) -> str:
    return f"{node.value('groupId')}:{node.value('artifactId')}:{node.value('version')}"


def managed(repo: Repository, project: Project, depth: int = 0) -> dict[str, Managed]:
    """groupId:artifactId → its managed version, for a project: the innermost pom's entries win over its
    parents', explicit entries over imported BOMs'."""
    found: dict[str, Managed] = {}
    for pom in project.chain:  # innermost first: setdefault keeps the nearest
        section = pom.root.find("dependencyManagement", "dependencies")
        entries = section.all("dependency") if section is not None else []
        for entry in entries:  # interpolated with the whole chain's properties, the nearest winning, as Maven does
            name = name_of(entry, project)
            if name is None:
                continue
            if entry.value("scope") == "import" and entry.value("type") == "pom":
                _import_bom(repo, project, entry, name, found, depth)
                continue
            version, where = version_of(entry, project, pom.path)
            written = entry.value("version") or ""
            found.setdefault(name, Managed(version, where, "properties" if "${" in written else
                                           "dependencyManagement"))
    return found


def _import_bom(repo: Repository, project: Project, entry: Node, name: str, found: dict[str, Managed],
                depth: int) -> None:
    group, _, artifact = name.partition(":")
    bom = repo.by_coordinates(group, artifact)
    version, _ = project.resolve(entry.value("version"))
    if bom is None or depth >= _MAX_CHAIN:
        project.notes.append(f"the BOM {name}:{version or '?'} is not in the repository")
        return
    for key, value in managed(repo, repo.project(bom), depth + 1).items():
        found.setdefault(key, value)


def name_of(node: Node, project: Project) -> str | None:
    group, _ = project.resolve(node.value("groupId"))
    artifact, _ = project.resolve(node.value("artifactId"))
    return f"{group}:{artifact}" if group and artifact else None


def version_of(node: Node, project: Project, path: str) -> tuple[str | None, Where | None]:
    """(resolved version, where its literal is) of a dependency-like element with a <version>."""
    tag = node.child("version")
    if tag is None or not tag.text:
        return None, None
    value, where = project.resolve(tag.text)
    if "${" not in tag.text:
        return value, (path, tag.text_line)
    return value, where
