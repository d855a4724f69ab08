"""C# `using` directives and the qualified names that lead back to them, through tree-sitter.

Imports: `using N.M;`, `global using N.M;`, `using static N.M.T;` and
`using A = N.M.T;`: the site's module and symbol are the namespace or type named.
Uses: an alias's uses (`A.Parse(...)` → `N.M.T.Parse`), and names written out in
full from a namespace the file imports (`Newtonsoft.Json.JsonConvert.SerializeObject`,
`global::` allowed). Which NuGet package a namespace belongs to is a prefix
guess made later (`callsites.packages`). Not tracked: a type used by its simple
name after `using N.M;` (`JsonConvert.SerializeObject`): which of the imported
namespaces declares it is not known without the packages' assemblies; members
of `using static` types; calls on instances.
"""

from __future__ import annotations

from repocontext.callsites import treesitter as ts
from repocontext.callsites.common import FileScan, RawSite
from repocontext.callsites.namerefs import after_dot, dotted, inside, pos, word_nodes

_IMPORTS = "(using_directive) @using"
_TARGETS = frozenset({"identifier", "qualified_name", "alias_qualified_name", "generic_name"})


def warm() -> None:
    """Load the grammar and compile the import query (before workers fork: see the probe)."""
    ts.parser("c_sharp")
    ts.query("c_sharp", _IMPORTS)


def _using(node: ts.Node) -> tuple[str, str | None] | None:
    """(namespace or type named, alias or None) of one using directive."""
    targets = [c for c in node.named_children if c.type in _TARGETS]
    if not targets:
        return None
    alias = node.child_by_field_name("name")
    target = targets[-1]
    if alias is not None and target == alias:
        return None
    return dotted(target).removeprefix("global::"), ts.text(alias) if alias is not None else None


def _chain(node: ts.Node) -> tuple[ts.Node, str]:
    """The longest `a.b.c` member access or qualified name that `node` is the first part of, and its text."""
    parts = [ts.text(node)]
    parent = node.parent
    if parent is not None and parent.type == "alias_qualified_name" and parent.child_by_field_name("name") == node:
        node, parent = parent, parent.parent  # global::Newtonsoft
    while parent is not None:
        field = {"member_access_expression": "expression", "qualified_name": "qualifier"}.get(parent.type)
        if field is None or parent.child_by_field_name(field) != node:
            break
        name = parent.child_by_field_name("name")
        if name is None:
            break
        parts.append(ts.text(name.child_by_field_name("name") or name) if name.type == "generic_name" else
                     ts.text(name))
        node, parent = parent, parent.parent
    return node, ".".join(parts)


def scan_csharp(text: str) -> FileScan:
    """Usings, alias uses and fully qualified uses of imported namespaces in one C# file."""
    scan = FileScan()
    data = text.encode("utf-8")
    root = ts.parser("c_sharp").parse(data).root_node
    aliases: dict[str, str] = {}
    namespaces: set[str] = set()
    for node in ts.captures("c_sharp", _IMPORTS, root).get("using", []):
        found = _using(node)
        if found is None:
            continue
        target, alias = found
        scan.imports.append(target)
        scan.sites.append(RawSite(target, target, *pos(node), "import"))
        if alias is not None:
            aliases[alias] = target
        else:
            namespaces.add(target)
    roots = {name.partition(".")[0] for name in namespaces}
    for node in word_nodes(root, data, {*aliases, *roots}, ("identifier",)):
        if after_dot(data, node.start_byte) or inside(node, ("using_directive",)):
            continue
        name = ts.text(node)
        _, chain = _chain(node)
        if name in aliases:
            target = aliases[name]
            rest = chain[len(name):]
            scan.sites.append(RawSite(target, target + rest, *pos(node), "use"))
            continue
        namespace = max((n for n in namespaces if chain.startswith(n + ".")), key=len, default=None)
        if namespace is not None:
            scan.sites.append(RawSite(namespace, chain, *pos(node), "use"))
    scan.sites.sort(key=lambda s: (s.line, s.col, s.kind, s.symbol))
    scan.partial_line = ts.first_error_line(root)
    return scan
