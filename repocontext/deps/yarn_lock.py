"""yarn.lock: Yarn 1 ("classic", its own format) and Yarn 2+ ("berry", YAML with a `__metadata` key).

Yarn 1 entries are keyed by every `name@range` that resolved to them
(`lodash@^4.17.20, lodash@^4.17.21:`), with `version` and a `dependencies`
block of `name "range"` lines; the file has no root entry, so the direct set
is what the package.json files beside it (and in its workspaces) declare.
Berry keys are the same descriptors with a protocol (`lodash@npm:^4.17.20`);
`resolution` names the package actually installed, and each workspace has
its own entry (`web@workspace:.`) listing the project's dependencies, which
are the direct set. Workspace, link and portal entries are the project's
own code; `patch:` entries repeat the package they patch: none is recorded.
"""

from __future__ import annotations

import re
from typing import Any

from repocontext.deps.common import Issue, Parsed, no_manifest_issue
from repocontext.deps.js_lock import Entry, lock_records, manifest_roots, real_name, spec_source, split_descriptor
from repocontext.deps.yaml_lines import load_yaml
from repocontext.model import Dependency

_CLASSIC_WORD = re.compile(r'"((?:[^"\\]|\\.)*)"|(\S+)')
_DESCRIPTOR = re.compile(r'"((?:[^"\\]|\\.)*)"|([^",]+)')
_BERRY = re.compile(r"^__metadata:", re.MULTILINE)
_DEP_SECTIONS = ("dependencies", "optionalDependencies")
_LOCAL = ("workspace:", "link:", "portal:", "patch:")


def is_berry(text: str) -> bool:
    return _BERRY.search(text) is not None


def parse_yarn_lock(path: str, text: str, manifests: list[Dependency] | None) -> Parsed:
    """Records for every package locked in `path`; `manifests` are the package.json records it serves."""
    return _berry(path, text, manifests or []) if is_berry(text) else _classic(path, text, manifests or [])


def _words(body: str) -> list[str]:
    return [bare or quoted for quoted, bare in _CLASSIC_WORD.findall(body)]


def _descriptors(key: str) -> list[str]:
    return [(q or b).strip() for q, b in _DESCRIPTOR.findall(key) if (q or b).strip()]


def _classic_blocks(path: str, text: str, issues: list[Issue]) -> list[tuple[list[str], int, dict[str, Any]]]:
    """(descriptors, line, {field: value, "dependencies": {name: range}}) for every Yarn 1 entry."""
    blocks: list[tuple[list[str], int, dict[str, Any]]] = []
    fields: dict[str, Any] | None = None
    section: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        body = raw.strip()
        if not body or body.startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        if indent == 0:
            fields, section = None, None
            if not body.endswith(":"):
                issues.append(Issue(f"unexpected line in yarn.lock: {body[:80]}", path, number))
                continue
            fields = {}
            blocks.append((_descriptors(body[:-1]), number, fields))
        elif fields is None:
            continue
        elif indent == 2 and body.endswith(":") and " " not in body:
            section = body[:-1]
            fields.setdefault(section, {})
        elif indent == 2:
            section = None
            words = _words(body)
            fields[words[0]] = words[1] if len(words) > 1 else ""
        elif section in _DEP_SECTIONS:
            words = _words(body)
            if len(words) >= 2:
                fields[section][words[0]] = " ".join(words[1:])
    return blocks


def _classic(path: str, text: str, manifests: list[Dependency]) -> Parsed:
    result = Parsed()
    blocks = _classic_blocks(path, text, result.issues)
    lookup = {d: f"{number}" for descriptors, number, _ in blocks for d in descriptors}
    entries: dict[str, Entry] = {}
    for descriptors, number, fields in blocks:
        if not descriptors:
            continue
        name, spec = split_descriptor(descriptors[0])
        specs = [split_descriptor(d)[1] for d in descriptors]
        deps = [lookup[f"{n}@{r}"] for section in _DEP_SECTIONS for n, r in fields.get(section, {}).items()
                if f"{n}@{r}" in lookup]
        version = fields.get("version") or None
        entries[f"{number}"] = Entry(name=real_name(name, spec), version=version, line=number,
                                     deps=sorted(set(deps)), source=spec_source(specs))
    roots = manifest_roots(manifests, lambda n, r: lookup.get(f"{n}@{r}"), lookup)
    return _records(path, entries, roots, manifests, result, "yarn-classic")


def _records(path: str, entries: dict[str, Entry], roots: dict[str, bool], manifests: list[Dependency],
             result: Parsed, flavour: str) -> Parsed:
    deps, guessed = lock_records(path, entries, roots, flavour)
    result.deps.extend(deps)
    if guessed and entries and not manifests:
        result.issues.append(no_manifest_issue(path))
    return result


def _berry_target(name: str, spec: str, lookup: dict[str, str]) -> str | None:
    """The entry a `name: range` dependency line resolves to (Yarn 2/3 omit the default `npm:` protocol)."""
    return lookup.get(f"{name}@{spec}") or lookup.get(f"{name}@npm:{spec}")


def _berry(path: str, text: str, manifests: list[Dependency]) -> Parsed:
    loaded = load_yaml(path, text, depth=1)
    if isinstance(loaded, Issue):
        return Parsed(issues=[loaded])
    data, lines = loaded
    packages = {key: value for key, value in data.items() if key != "__metadata" and isinstance(value, dict)}
    lookup = {d: key for key in packages for d in _descriptors(key)}
    dev_names = {d.name: d.dev for d in manifests}
    entries: dict[str, Entry] = {}
    roots: dict[str, bool] = {}
    for key, fields in packages.items():
        resolution = str(fields.get("resolution") or _descriptors(key)[0])
        name, locator = split_descriptor(resolution)
        deps = {n: str(r) for s in _DEP_SECTIONS if isinstance(fields.get(s), dict) for n, r in fields[s].items()}
        targets = {n: _berry_target(n, r, lookup) for n, r in deps.items()}
        if locator.startswith("workspace:"):  # the project itself: what it depends on is the direct set
            for dep_name, target in targets.items():
                if target is not None:
                    roots[target] = roots.get(target, True) and dev_names.get(dep_name, False)
            continue
        if locator.startswith(_LOCAL):
            continue
        entries[key] = Entry(name=name, version=str(fields.get("version") or "") or None, line=lines.get((key,)),
                             deps=sorted({t for t in targets.values() if t is not None}),
                             source=None if locator.startswith("npm:") else locator)
    for entry in entries.values():
        entry.deps = [d for d in entry.deps if d in entries]
    if not roots:  # a lock written before workspaces had entries: the manifests give the direct set
        roots = manifest_roots(manifests, lambda n, r: _berry_target(n, r, lookup), lookup)
    roots = {key: dev for key, dev in roots.items() if key in entries}  # other workspaces are not packages
    return _records(path, entries, roots, manifests, Parsed(), "yarn-berry")
