"""Java and Kotlin imports and the uses of the names they bind, through tree-sitter.

Imports: `import a.b.C;`, `import static a.b.C.m;`, `import a.b.*;`, and
Kotlin's `import a.b.C as D`: the site's module and symbol are the imported path
(a wildcard's is the package, `a.b`). Uses: an identifier or type equal to a
name a single-name import bound (`C`, `m`, `D`), not after a `.`, not a
declaration's own name, with one member after it where there is one (`C.of`,
`C.X`): the symbol is `a.b.C.of`. Which Maven artifact a path belongs to is a
prefix guess made later (`callsites.packages`). Not tracked: names a wildcard
import brings in, fully qualified names written in code, calls on instances
(`mapper.readValue`: the variable's type is not inferred), and scoping.
"""

from __future__ import annotations

from repocontext.callsites import treesitter as ts
from repocontext.callsites.common import FileScan, RawSite
from repocontext.callsites.namerefs import after_dot, dotted, inside, pos, word_nodes

_IMPORTS = {"java": "(import_declaration) @import", "kotlin": "(import) @import"}
_HEADERS = {"java": ("import_declaration", "package_declaration"), "kotlin": ("import", "package_header")}
_NAMES = {"java": ("identifier", "type_identifier"), "kotlin": ("identifier",)}
# Member access whose first child is the object: Java (field: `object`), Kotlin (first named child).
_MEMBERS = {"method_invocation": "name", "field_access": "field", "navigation_expression": ""}


def grammar_for(path: str) -> str:
    return "kotlin" if path.endswith((".kt", ".kts")) else "java"


def warm(grammar: str) -> None:
    """Load `grammar` ("java" or "kotlin") and its import query (before workers fork: see the probe)."""
    ts.parser(grammar)
    ts.query(grammar, _IMPORTS[grammar])


def _import(node: ts.Node, grammar: str) -> tuple[str, str | None] | None:
    """(imported path, name it binds or None) of one import declaration."""
    path_node = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier",
                                                                   "qualified_identifier")), None)
    if path_node is None:
        return None
    path = dotted(path_node)
    if any(c.type in ("asterisk", "*") for c in node.children):
        return path, None
    if grammar == "kotlin":
        alias = next((c for c in node.named_children if c.type in ("identifier", "type_identifier")
                      and c.start_byte > path_node.end_byte), None)
        if alias is not None:
            return path, ts.text(alias)
    return path, path.rpartition(".")[2]


def _member(node: ts.Node) -> str:
    """`.name` when `node` is the object of a member access (`C.of(...)`, `C.X`), else ""."""
    parent = node.parent
    if parent is None or parent.type not in _MEMBERS:
        return ""
    field = _MEMBERS[parent.type]
    if field:
        if parent.child_by_field_name("object") != node:
            return ""
        member = parent.child_by_field_name(field)
    else:
        children = parent.named_children
        if not children or children[0] != node or len(children) < 2:
            return ""
        member = children[1]
    name = ts.text(member)
    return f".{name}" if name.isidentifier() else ""


def _declared(node: ts.Node) -> bool:
    """Whether `node` is the name a declaration gives (a method or variable named like an import)."""
    parent = node.parent
    return parent is not None and parent.child_by_field_name("name") == node and parent.type.endswith(
        ("_declaration", "declarator", "parameter"))


def scan_jvm(text: str, grammar: str = "java") -> FileScan:
    """Imports and uses of imported names in one Java or Kotlin file (`grammar`: java, kotlin)."""
    scan = FileScan()
    data = text.encode("utf-8")
    root = ts.parser(grammar).parse(data).root_node
    bound: dict[str, str] = {}
    for node in ts.captures(grammar, _IMPORTS[grammar], root).get("import", []):
        found = _import(node, grammar)
        if found is None:
            continue
        path, name = found
        scan.imports.append(path)
        scan.sites.append(RawSite(path, path, *pos(node), "import"))
        if name is not None:
            bound[name] = path
    for node in word_nodes(root, data, bound, _NAMES[grammar]):
        if after_dot(data, node.start_byte) or _declared(node) or inside(node, _HEADERS[grammar]):
            continue
        path = bound[ts.text(node)]
        scan.sites.append(RawSite(path, path + _member(node), *pos(node), "use"))
    scan.sites.sort(key=lambda s: (s.line, s.col, s.kind, s.symbol))
    scan.partial_line = ts.first_error_line(root)
    return scan
