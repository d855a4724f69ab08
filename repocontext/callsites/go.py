"""Go imports and `pkg.Name` uses, through tree-sitter; Go module paths from go.mod.

Imports: single imports and import blocks, with aliases; `_` and `.`
imports are recorded as imports only (a dot import's names cannot be told
from local ones). Uses: selector expressions and qualified types whose
operand is an imported package name (`yaml.Unmarshal`, `*yaml.Node`), qualified
by import path: "gopkg.in/yaml.v3.Unmarshal". A package imported without an
alias is known by a name guessed from its path (last element, version suffix
dropped, `go-` prefix / `-go` suffix dropped); Go has no other way to know
it without the package's source.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from repocontext.callsites import treesitter as ts
from repocontext.callsites.common import FileScan, RawSite

_IMPORTS = "(import_spec) @spec"
# One query for every file, its operands filtered here: a query naming each file's imports (`#any-of?`) was
# compiled once per file, which cost more than parsing the file.
_USES = (
    "((selector_expression operand: (identifier) @id field: (field_identifier) @field) @use)\n"
    "((qualified_type package: (package_identifier) @id name: (type_identifier) @field) @use)\n"
)
_MAJOR = re.compile(r"v\d+")
_HOSTS_WITH_OWNER = ("github.com/", "gitlab.com/", "bitbucket.org/", "golang.org/x/", "codeberg.org/")
_MODULE_LINE = re.compile(r"^\s*module\s+\"?([^\s\"]+)\"?", re.MULTILINE)


def is_std(path: str) -> bool:
    """Standard library (and cgo's "C"): the first path element has no dot."""
    return "." not in path.split("/", 1)[0]


def default_name(path: str) -> str:
    parts = path.split("/")
    last = parts[-1]
    if _MAJOR.fullmatch(last) and len(parts) > 1:
        last = parts[-2]
    last = re.sub(r"\.v\d+$", "", last)  # gopkg.in/yaml.v3
    last = last.removeprefix("go-").removesuffix("-go").removesuffix(".go")
    return last.replace("-", "_").replace(".", "_")


def module_of(path: str, known: Iterable[str] = ()) -> str:
    """The Go module an import path belongs to: the longest known module prefix, else a host-based guess."""
    best = ""
    for module in known:
        if (path == module or path.startswith(module + "/")) and len(module) > len(best):
            best = module
    if best:
        return best
    parts = path.split("/")
    size = 3 if path.startswith(_HOSTS_WITH_OWNER) else 2
    if len(parts) > size and _MAJOR.fullmatch(parts[size]):
        size += 1
    return "/".join(parts[:size])


def module_path(go_mod: str) -> str | None:
    """The `module` directive of a go.mod file."""
    found = _MODULE_LINE.search(go_mod)
    return found.group(1) if found else None


def _pos(node: ts.Node) -> tuple[int, int]:
    return node.start_point[0] + 1, node.start_point[1]


def warm() -> None:
    """Load the grammar and compile the queries every file uses (before workers fork: see the probe)."""
    ts.parser("go")
    ts.query("go", _IMPORTS)
    ts.query("go", _USES)


def scan_go(text: str) -> FileScan:
    """Imports and package-qualified uses in one Go file."""
    scan = FileScan()
    root = ts.parse("go", text).root_node
    bound: dict[str, str] = {}
    for spec in ts.captures("go", _IMPORTS, root).get("spec", []):
        path = ts.string_value(spec.child_by_field_name("path"))
        if path is None:
            continue
        scan.imports.append(path)
        scan.sites.append(RawSite(path, path, *_pos(spec), "import"))
        name = spec.child_by_field_name("name")
        if name is None:
            bound[default_name(path)] = path
        elif name.type == "package_identifier":
            bound[ts.text(name)] = path
    if bound:
        for _, found in ts.matches("go", _USES, root):
            ident = found["id"][0]
            path = bound.get(ts.text(ident))
            if path is not None:
                scan.sites.append(RawSite(path, f"{path}.{ts.text(found['field'][0])}", *_pos(ident), "use"))
    scan.sites.sort(key=lambda s: (s.line, s.col, s.kind, s.symbol))
    scan.partial_line = ts.first_error_line(root)
    return scan


def import_path_of_dir(directory: str, modules: dict[str, str]) -> str | None:
    """The import path of a repository directory, from the nearest enclosing go.mod."""
    best: str | None = None
    for root in modules:
        inside = root == "" or directory == root or directory.startswith(root + "/")
        if inside and (best is None or len(root) > len(best)):
            best = root
    if best is None:
        return None
    rest = directory[len(best):].strip("/")
    return modules[best] + ("/" + rest if rest else "")
