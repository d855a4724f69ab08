"""JavaScript / TypeScript imports and their uses, through tree-sitter.

Imports: `import ... from 'x'` (default, namespace, named, side-effect only,
`import type`), TypeScript `import x = require('x')`, `export ... from 'x'`,
`require('x')` (bound by `const x = ...`, destructuring, or
`require('x').a.b`), and dynamic `import('x')` (bound when awaited into a
variable). Uses: every reference to a bound name, as the longest member chain
rooted at it (`axios.get`, `_.map.cache`); a default import qualifies as the
module itself. Not tracked: scoping (a parameter with an imported name still
counts), computed members (`x['a']`), re-assignment of bound names.
"""

from __future__ import annotations

import re
from typing import TypeGuard

from repocontext.callsites import treesitter as ts
from repocontext.callsites.common import FileScan, RawSite
from repocontext.paths import suffix as path_suffix

# What an import is, as a tree-sitter query: `import_matches` finds exactly these matches (the tests hold it
# to the query over real files), without running the query over the whole tree.
IMPORTS_QUERY = """
(import_statement source: (string) @src) @import
(export_statement source: (string) @src) @export
(call_expression function: (identifier) @fn arguments: (arguments . (string) @src) (#eq? @fn "require")) @call
(call_expression function: (import) arguments: (arguments . (string) @src)) @call
"""
TS_IMPORTS_QUERY = IMPORTS_QUERY + "(import_statement (import_require_clause source: (string) @src)) @import\n"
# Every match above holds one of these words as a token; a bundle holds a few among tens of thousands of nodes.
_IMPORT_WORDS = re.compile(rb"(?<![A-Za-z0-9_$])(?:import|export|require)(?![A-Za-z0-9_$])")

# Parents under which an identifier is a binding, not a use.
_BINDING_PARENTS = frozenset({
    "import_clause", "import_specifier", "namespace_import", "import_require_clause", "formal_parameters",
    "required_parameter", "optional_parameter", "pair_pattern", "object_pattern", "array_pattern",
    "rest_pattern", "assignment_pattern", "object_assignment_pattern",
})
# Declarations whose `name` (or arrow `parameter`) field is a binding; JSX tags use `name` for a reference.
_DECLARATIONS = frozenset({
    "variable_declarator", "function_declaration", "function_expression", "generator_function_declaration",
    "generator_function", "class_declaration", "class", "arrow_function", "catch_clause",
})

NODE_BUILTINS = frozenset({
    "assert", "async_hooks", "buffer", "child_process", "cluster", "console", "constants", "crypto", "dgram",
    "diagnostics_channel", "dns", "domain", "events", "fs", "http", "http2", "https", "inspector", "module",
    "net", "os", "path", "perf_hooks", "process", "punycode", "querystring", "readline", "repl", "stream",
    "string_decoder", "sys", "timers", "tls", "trace_events", "tty", "url", "util", "v8", "vm", "wasi",
    "worker_threads", "zlib",
})

_Binding = tuple[str, str, "ts.Node"]  # (local name, qualified name, node giving the position)


def grammar_for(path: str) -> str:
    suffix = path_suffix(path).lower()
    return {".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx"}.get(suffix, "javascript")


def is_relative(spec: str) -> bool:
    return spec.startswith((".", "/"))


def package_name(spec: str) -> str | None:
    """The npm package a specifier names (`@scope/pkg/sub` → `@scope/pkg`); None for local, aliased or builtin."""
    if not spec or spec.startswith((".", "/", "~", "#", "@/")) or ":" in spec:
        return None  # relative, path alias, subpath import, or a scheme (node:, https:, virtual:)
    parts = spec.split("/")
    name = "/".join(parts[:2]) if spec.startswith("@") and len(parts) > 1 else parts[0]
    return None if name in NODE_BUILTINS else name


def _pos(node: ts.Node) -> tuple[int, int]:
    return node.start_point[0] + 1, node.start_point[1]


def _import_bindings(statement: ts.Node, spec: str) -> list[_Binding]:
    found: list[_Binding] = []
    for clause in statement.named_children:
        if clause.type == "import_require_clause":
            ident = clause.named_children[0] if clause.named_children else None
            if ident is not None and ident.type == "identifier":
                found.append((ts.text(ident), spec, ident))
        if clause.type != "import_clause":
            continue
        for part in clause.named_children:
            if part.type == "identifier":  # default import
                found.append((ts.text(part), spec, part))
            elif part.type == "namespace_import" and part.named_children:
                found.append((ts.text(part.named_children[0]), spec, part.named_children[0]))
            elif part.type == "named_imports":
                for item in part.named_children:
                    if item.type != "import_specifier":
                        continue
                    name = item.child_by_field_name("name")
                    alias = item.child_by_field_name("alias") or name
                    imported = ts.string_value(name) or ts.text(name)
                    found.append((ts.text(alias), f"{spec}.{imported}", item))
    return found


def _pattern_bindings(pattern: ts.Node, qualified: str) -> list[_Binding]:
    """Names bound by `const {a, b: c, d = 1} = <qualified>`."""
    found: list[_Binding] = []
    for item in pattern.named_children:
        if item.type == "shorthand_property_identifier_pattern":
            found.append((ts.text(item), f"{qualified}.{ts.text(item)}", item))
        elif item.type == "object_assignment_pattern":
            left = item.child_by_field_name("left")
            if left is not None and left.type == "shorthand_property_identifier_pattern":
                found.append((ts.text(left), f"{qualified}.{ts.text(left)}", left))
        elif item.type == "pair_pattern":
            key, value = item.child_by_field_name("key"), item.child_by_field_name("value")
            if value is not None and value.type == "identifier":
                found.append((ts.text(value), f"{qualified}.{ts.text(key)}", value))
    return found


def _call_bindings(call: ts.Node, spec: str) -> tuple[str, list[_Binding]]:
    """What `require('x')` / `await import('x')` is bound to, following `.a.b` after the value.

    A dynamic `import()` is a promise: members count only once it is awaited.
    """
    node, qualified = call, spec
    settled = ts.text(call.child_by_field_name("function")) == "require"
    parent: ts.Node | None
    while node.parent is not None:
        parent = node.parent
        if settled and parent.type == "member_expression" and parent.child_by_field_name("object") == node:
            qualified += "." + ts.text(parent.child_by_field_name("property"))
        elif parent.type == "await_expression":
            settled = True
        elif parent.type != "parenthesized_expression":
            break
        node = parent
    parent = node.parent
    if parent is None:
        return qualified, []
    target = None
    if parent.type == "variable_declarator" and parent.child_by_field_name("value") == node:
        target = parent.child_by_field_name("name")
    elif parent.type == "assignment_expression" and parent.child_by_field_name("right") == node:
        target = parent.child_by_field_name("left")
    if target is not None and target.type == "identifier":
        return qualified, [(ts.text(target), qualified, target)]
    if target is not None and target.type == "object_pattern":
        return qualified, _pattern_bindings(target, qualified)
    return qualified, []


def _chain(node: ts.Node) -> tuple[str, bool]:
    """The member chain after an identifier (".a.b"), and whether the identifier is a binding."""
    parent = node.parent
    if parent is None:
        return "", False
    if parent.type in _BINDING_PARENTS or (
        parent.type in _DECLARATIONS
        and node in (parent.child_by_field_name("name"), parent.child_by_field_name("parameter"))
    ):
        return "", True
    parts: list[str] = []
    while parent is not None:
        if parent.type == "member_expression" and parent.child_by_field_name("object") == node:
            prop = parent.child_by_field_name("property")
            if prop is None or prop.type != "property_identifier":
                break
            parts.append(ts.text(prop))
        elif parent.type == "nested_type_identifier" and parent.child_by_field_name("module") == node:
            parts.append(ts.text(parent.child_by_field_name("name")))
        else:
            break
        node, parent = parent, parent.parent
    return "".join("." + p for p in parts), False


def warm(grammar: str) -> None:
    """Load `grammar` (before workers fork: see the probe)."""
    ts.parser(grammar)


Match = dict[str, list["ts.Node"]]


def import_matches(root: ts.Node, data: bytes, grammar: str) -> list[Match]:
    """The matches of IMPORTS_QUERY (TS_IMPORTS_QUERY unless `grammar` is javascript) under `root`, in document
    order: found from the import words in the text, each asked of the tree, where running the query walked
    every node of the file (a third of a bundle's parse time again)."""
    found: list[Match] = []
    for hit in _IMPORT_WORDS.finditer(data):
        start, end = hit.span()
        node = root.descendant_for_byte_range(start, end)
        if node is None or node.start_byte != start or node.end_byte != end:
            continue  # part of a longer token (a non-ASCII identifier character beside it)
        parent = node.parent
        while parent is not None and parent.start_byte == start and parent.end_byte == end:
            node, parent = parent, parent.parent  # the keyword inside a named `import` node
        if parent is not None:
            match = _word_match(hit.group(), node, parent, grammar)
            if match is not None:
                found.append(match)
    return found


def _word_match(word: bytes, node: ts.Node, parent: ts.Node, grammar: str) -> Match | None:
    """The match an import word's token begins (as the query would capture it), or None."""
    if word == b"export":
        source = parent.child_by_field_name("source") if parent.type == "export_statement" else None
        return {"src": [source], "export": [parent]} if _is_string(source) else None
    if parent.type == "call_expression" and parent.child_by_field_name("function") == node and (
            node.type == "import" or (node.type == "identifier" and word == b"require")):
        args = parent.child_by_field_name("arguments")
        first = args.named_children[0] if args is not None and args.named_children else None
        if not _is_string(first):
            return None
        return {"fn": [node], "src": [first], "call": [parent]} if word == b"require" else {"src": [first],
                                                                                             "call": [parent]}
    if word != b"import" or parent.type != "import_statement":
        return None
    source = parent.child_by_field_name("source")
    if _is_string(source):
        return {"src": [source], "import": [parent]}
    if grammar == "javascript":
        return None
    clause = next((c for c in parent.named_children if c.type == "import_require_clause"), None)
    source = clause.child_by_field_name("source") if clause is not None else None
    return {"src": [source], "import": [parent]} if _is_string(source) else None


def _is_string(node: ts.Node | None) -> TypeGuard[ts.Node]:
    return node is not None and node.type == "string"


def scan_js(text: str, grammar: str = "javascript") -> FileScan:
    """Imports and uses in one JavaScript/TypeScript file (`grammar`: javascript, typescript, tsx)."""
    scan = FileScan()
    data = text.encode("utf-8")
    root = ts.parser(grammar).parse(data).root_node
    bound: dict[str, str] = {}
    for found in import_matches(root, data, grammar):
        spec = ts.string_value(found["src"][0])
        if spec is None:
            continue
        scan.imports.append(spec)
        if "import" in found:
            construct, (qualified, bindings) = found["import"][0], (spec, _import_bindings(found["import"][0], spec))
        elif "call" in found:
            construct = found["call"][0]
            qualified, bindings = _call_bindings(construct, spec)
        else:
            construct, qualified, bindings = found["export"][0], spec, []
        for name, symbol, node in bindings:
            bound[name] = symbol
            scan.sites.append(RawSite(spec, symbol, *_pos(node), "import"))
        if not bindings:
            scan.sites.append(RawSite(spec, qualified, *_pos(construct), "import"))
    if bound:
        _uses(scan, root, data, bound)
    scan.sites.sort(key=lambda s: (s.line, s.col, s.kind, s.symbol))
    scan.partial_line = ts.first_error_line(root)
    return scan


def _uses(scan: FileScan, root: ts.Node, data: bytes, bound: dict[str, str]) -> None:
    """The uses of the bound names: their occurrences in the text that are identifier nodes of the tree. Finding
    them by text and asking the tree about each replaced a query capturing every identifier of the file (a
    bundle has tens of thousands) and decoding each one's text."""
    modules = {site.symbol: site.module for site in scan.sites}
    for match in _occurrences(bound).finditer(data):
        start, end = match.span()
        node = root.descendant_for_byte_range(start, end)
        if node is None or node.type != "identifier" or node.start_byte != start or node.end_byte != end:
            continue  # in a string, a comment, a property name, or a longer identifier
        symbol = bound[match.group().decode("utf-8")]
        rest, binding = _chain(node)
        if binding:
            continue
        scan.sites.append(RawSite(modules.get(symbol, symbol), symbol + rest, *_pos(node), "use"))


def _occurrences(bound: dict[str, str]) -> re.Pattern[bytes]:
    """The bound names as whole words of ASCII identifier characters; a name next to a non-ASCII identifier
    character is part of a longer identifier, which the node's extent then tells."""
    names = b"|".join(re.escape(name.encode("utf-8")) for name in sorted(bound, key=lambda n: (-len(n), n)))
    return re.compile(rb"(?<![A-Za-z0-9_$])(?:" + names + rb")(?![A-Za-z0-9_$])")
