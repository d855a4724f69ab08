"""NuGet declarations: MSBuild files (*.csproj, *.fsproj, *.vbproj, Directory.Packages.props,
Directory.Build.props) and the older packages.config.

An MSBuild file declares a package with a `PackageReference` (a project's dependency), a `PackageVersion`
(central package management: Directory.Packages.props holds the versions, a project's PackageReference then
has none) or a `GlobalPackageReference` (every project below). The version is the `Version` attribute or
child element, or `VersionOverride` (a project's exception to the central version); `Include` or `Update`
names the package. A `$(Property)` in a version is resolved from the same file's PropertyGroups (the last
definition wins, as in MSBuild); one defined elsewhere leaves the version unknown. The record's `line` is
where the version text is written (the element's line when it is an attribute or absent), `constraint`
the version text as written, and `version` the version restore installs: the range's inclusive floor
(NuGet picks the lowest version a range admits; see nuget_ranges).

A project is a test project (every record dev) when it sets `IsTestProject` true or references
Microsoft.NET.Test.Sdk. packages.config: `<package id version developmentDependency>`, exact versions.
Names are kept as written: NuGet ids are case-insensitive, and matching folds case (versions.normalize_name).
"""

from __future__ import annotations

import re

from repocontext.deps.common import Issue, Parsed
from repocontext.deps.msbuild_xml import Element, MsbuildXmlError, parse
from repocontext.deps.nuget_ranges import lowest_applicable
from repocontext.model import Dependency

ITEMS = frozenset({"packagereference", "packageversion", "globalpackagereference"})
TEST_SDK = "microsoft.net.test.sdk"
_PROPERTY = re.compile(r"\$\(\s*([A-Za-z_][\w.-]*)\s*\)")
_VERSION_KEYS = ("VersionOverride", "Version")  # an override wins over the central version


def parse_msbuild(path: str, text: str) -> Parsed:
    try:
        elements = parse(text)
    except MsbuildXmlError as exc:
        return Parsed(issues=[Issue(str(exc), path, exc.line, "error")])
    properties = _properties(elements)
    items = [e for e in elements if e.tag.lower() in ITEMS and e.parent.lower() == "itemgroup"]
    dev = _is_project(path) and _is_test_project(properties, items)
    result = Parsed()
    for item in items:
        result.extend(_item(path, item, properties, dev))
    return result


def parse_packages_config(path: str, text: str) -> Parsed:
    try:
        elements = parse(text)
    except MsbuildXmlError as exc:
        return Parsed(issues=[Issue(str(exc), path, exc.line, "error")])
    result = Parsed()
    for element in (e for e in elements if e.is_("package") and e.parent.lower() == "packages"):
        name, version = (element.attr("id") or "").strip(), (element.attr("version") or "").strip()
        if not name:
            result.issues.append(Issue("<package> without an id", path, element.line))
            continue
        result.deps.append(Dependency(
            ecosystem="NuGet", name=name, version=version or None, constraint=version or None, file=path,
            line=element.line, section="packages.config",
            dev=(element.attr("developmentDependency") or "").strip().lower() == "true"))
    return result


def resolve(value: str, properties: dict[str, tuple[str, int]]) -> str | None:
    """`value` with every `$(Name)` replaced from `properties`; None when one is not defined there."""
    missing = False

    def replace(found: re.Match[str]) -> str:
        nonlocal missing
        known = properties.get(found.group(1).lower())
        missing = missing or known is None
        return known[0] if known else ""

    out = _PROPERTY.sub(replace, value)
    return None if missing or "$(" in out or "@(" in out or "%(" in out else out


def property_of(value: str) -> str | None:
    """The property name when `value` is exactly one `$(Name)` reference."""
    found = _PROPERTY.fullmatch(value.strip())
    return found.group(1) if found else None


def _properties(elements: list[Element]) -> dict[str, tuple[str, int]]:
    """Lower-cased property name → (value, line of its definition); the last definition wins."""
    found: dict[str, tuple[str, int]] = {}
    for element in elements:
        if element.parent.lower() == "propertygroup" and not element.children:
            found[element.tag.lower()] = (element.text, element.line)
    return found


def _is_project(path: str) -> bool:
    return path.endswith(("proj", ".targets")) and not path.endswith(".props")


def _is_test_project(properties: dict[str, tuple[str, int]], items: list[Element]) -> bool:
    flag = properties.get("istestproject")
    if flag is not None and flag[0].strip().lower() == "true":
        return True
    return any(i.is_("PackageReference") and (i.attr("Include") or "").strip().lower() == TEST_SDK for i in items)


def _version_of(item: Element) -> tuple[str | None, int]:
    """The version text as written and the line it is on: an attribute, else a child element."""
    for key in _VERSION_KEYS:
        value = item.attr(key)
        if value is not None:
            return value.strip(), item.line
    for key in _VERSION_KEYS:
        child = item.child(key)
        if child is not None:
            return child.text, child.line
    return None, item.line


def _item(path: str, item: Element, properties: dict[str, tuple[str, int]], dev: bool) -> Parsed:
    result = Parsed()
    names = item.attr("Include") or item.attr("Update") or ""
    if any(mark in names for mark in ("$(", "@(", "%(")):
        result.issues.append(Issue(f"{item.tag} {names!r}: names from properties or items are not read", path,
                                   item.line, "info"))
        return result
    written, line = _version_of(item)
    resolved = resolve(written, properties) if written else None
    if written and resolved is None:
        result.issues.append(Issue(f"{item.tag} {names.strip()}: version {written!r} uses a property not defined in "
                                   "this file; its version is unknown here", path, line, "info"))
    for name in (n.strip() for n in names.split(";")):
        if name:
            result.deps.append(Dependency(
                ecosystem="NuGet", name=name, version=lowest_applicable(resolved) if resolved else None,
                constraint=written or None, dev=dev, file=path, line=line, section=item.tag))
    return result
