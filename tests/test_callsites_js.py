"""JavaScript / TypeScript imports and member uses through tree-sitter."""

from __future__ import annotations

import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from repocontext.callsites.js import grammar_for, package_name, scan_js


def sites(source: str, grammar: str = "javascript") -> list[tuple[str, int, int, str]]:
    return [(s.symbol, s.line, s.col, s.kind) for s in scan_js(textwrap.dedent(source), grammar).sites]


def test_esm_default_namespace_and_named_imports() -> None:
    assert sites("""\
        import axios, {get as g} from 'axios';
        import * as _ from "lodash/fp";
        import './styles.css';
        axios.get(1).then(); _.map.cache(); g(2);
        """) == [
        ("axios", 1, 7, "import"), ("axios.get", 1, 15, "import"), ("lodash/fp", 2, 12, "import"),
        ("./styles.css", 3, 0, "import"),
        ("axios.get", 4, 0, "use"), ("lodash/fp.map.cache", 4, 21, "use"), ("axios.get", 4, 36, "use")]


def test_require_forms() -> None:
    assert sites("""\
        const yaml = require('js-yaml');
        const {load, dump: d} = require('js-yaml');
        const deep = require('q').sub.deep;
        require('side-effect');
        yaml.safeLoad(s); load(s); d(o); deep.call();
        """) == [
        ("js-yaml", 1, 6, "import"), ("js-yaml.load", 2, 7, "import"), ("js-yaml.dump", 2, 19, "import"),
        ("q.sub.deep", 3, 6, "import"), ("side-effect", 4, 0, "import"),
        ("js-yaml.safeLoad", 5, 0, "use"), ("js-yaml.load", 5, 18, "use"), ("js-yaml.dump", 5, 27, "use"),
        ("q.sub.deep.call", 5, 33, "use")]


def test_dynamic_import_binds_only_when_awaited() -> None:
    assert sites("""\
        const m = await import('dyn');
        import('lazy').then(x => x);
        m.run();
        """) == [("dyn", 1, 6, "import"), ("lazy", 2, 0, "import"), ("dyn.run", 3, 0, "use")]


def test_export_from_and_bindings_are_not_uses() -> None:
    assert sites("""\
        export { a } from 'pkg-a';
        import b from 'pkg-b';
        function f(b) { return 1; }
        const o = { b: 1 };
        """) == [("pkg-a", 1, 0, "import"), ("pkg-b", 2, 7, "import")]


def test_typescript_import_require_type_imports_and_qualified_types() -> None:
    assert sites("""\
        import x = require('m');
        import type {T} from 'types';
        let f: x.Foo = x.bar();
        """, "typescript") == [
        ("m", 1, 7, "import"), ("types.T", 2, 13, "import"), ("m.Foo", 3, 7, "use"), ("m.bar", 3, 15, "use")]


def test_tsx_jsx_tags_are_uses() -> None:
    assert sites("""\
        import React from 'react';
        import {Button} from '@mui/material';
        export const A = () => <Button onClick={React.useCallback(() => 1)} />;
        """, "tsx") == [
        ("react", 1, 7, "import"), ("@mui/material.Button", 2, 8, "import"),
        ("@mui/material.Button", 3, 24, "use"), ("react.useCallback", 3, 40, "use")]


def test_package_names_and_grammars() -> None:
    assert package_name("@scope/pkg/sub/path") == "@scope/pkg"
    assert package_name("lodash/fp") == "lodash"
    assert [package_name(s) for s in ("./x", "../y", "/abs", "~/a", "#internal", "@/comp", "node:fs", "fs")] == [
        None] * 8
    assert [grammar_for(p) for p in ("a.js", "a.mjs", "a.ts", "a.tsx", "a.jsx")] == [
        "javascript", "javascript", "typescript", "tsx", "javascript"]


# Pieces of real-looking JavaScript / TypeScript, joined at random: every import form, the import words where
# they are not imports (strings, comments, templates, members, longer and non-ASCII identifiers), comments
# between tokens, nesting, and broken syntax.
_PIECES = [
    "import a from 'a';\n", "import * as ns from \"b/c\";\n", "import {x as y, z} from '@s/p';\n", "import 'side';\n",
    "import type {T} from 'types';\n", "import x = require('ts-req');\n", "export * from './re';\n",
    "export {q} from 'q';\n", "export const e = 1;\n", "export default function f() {}\n",
    "const r = require('r');\n", "const {m, n: k} = require('mn').sub;\n", "require(/* c */ 'commented');\n",
    "require(name);\n", "require('a', require('nested'));\n", "const d = await import('dyn');\n",
    "import(`tmpl`).then(f);\n", "import.meta.url;\n", "x.require('member');\n", "requireX('no');\n",
    "$import('no');\n", "éimport('no');\n", "// import z from 'comment'\n", "/* require('block') */\n",
    "s = \"import q from 'str'\";\n", "t = `${require('in-template')}`;\n", "if (a) { require('inner') }\n",
    "@dec export class C {}\n", "function (", "import {", "export", "require", "))\n", "let v = {import: 1};\n",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=12), st.sampled_from(["javascript", "typescript",
                                                                                         "tsx"]))
def test_import_words_find_exactly_what_the_import_query_matches(pieces: list[str], grammar: str) -> None:
    """The scanner finds imports from the words in the text; the query is the definition it must agree with,
    match for match, in order (checked beside on 11,230 files of nine npm packages and the corpus trees)."""
    from repocontext.callsites import treesitter as ts
    from repocontext.callsites.js import IMPORTS_QUERY, TS_IMPORTS_QUERY, import_matches

    data = "".join(pieces).encode("utf-8")
    root = ts.parser(grammar).parse(data).root_node
    query = IMPORTS_QUERY if grammar == "javascript" else TS_IMPORTS_QUERY

    def spans(matches: list[dict[str, list[ts.Node]]]) -> list[list[tuple[str, int, int, str]]]:
        return [sorted((k, n.start_byte, n.end_byte, n.type) for k, nodes in m.items() for n in nodes)
                for m in matches]

    assert spans(import_matches(root, data, grammar)) == spans([m for _, m in ts.matches(grammar, query, root)])
