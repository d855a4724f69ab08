"""Python imports and uses through `ast`: aliases, from-imports, relative and star imports, scoping."""

from __future__ import annotations

import textwrap

from repocontext.callsites.common import (
    FileScan,
    RawSite,
    python_import_names,
    python_module_name,
    resolve_relative,
    resolve_scan,
)
from repocontext.callsites.python import scan_python


def sites(source: str, package: str | None = None) -> list[tuple[str, int, int, str]]:
    result = scan_python(textwrap.dedent(source), package)
    assert result.error is None
    return [(s.symbol, s.line, s.col, s.kind) for s in result.sites]


def test_alias_import_qualifies_uses_by_module_name() -> None:
    assert sites("""\
        import yaml as y
        data = y.safe_load(text)
        """) == [("yaml", 1, 7, "import"), ("yaml.safe_load", 2, 7, "use")]


def test_dotted_import_and_alias_of_submodule() -> None:
    assert sites("""\
        import os.path, a.b.c
        import a.b as ab
        a.b.c.d()
        ab.e.f(1)
        """) == [("os.path", 1, 7, "import"), ("a.b.c", 1, 16, "import"), ("a.b", 2, 7, "import"),
                 ("a.b.c.d", 3, 0, "use"), ("a.b.e.f", 4, 0, "use")]


def test_from_import_with_alias_and_bare_calls() -> None:
    assert sites("""\
        from yaml import safe_load, dump as d
        safe_load(s); d(x)
        f = safe_load
        """) == [("yaml.safe_load", 1, 17, "import"), ("yaml.dump", 1, 28, "import"),
                 ("yaml.safe_load", 2, 0, "use"), ("yaml.dump", 2, 14, "use"), ("yaml.safe_load", 3, 4, "use")]


def test_attribute_chain_rooted_in_a_call_is_followed_inside() -> None:
    assert sites("""\
        import requests
        requests.get(url).json().keys()
        """) == [("requests", 1, 7, "import"), ("requests.get", 2, 0, "use")]


def test_star_import_is_recorded_but_its_names_are_not() -> None:
    result = scan_python("from a.b import *\nthing()\n")
    assert result.sites == [RawSite("a.b", "a.b.*", 1, 16, "import")]
    assert result.imports == ["a.b"]


def test_relative_imports_resolve_against_the_package() -> None:
    assert sites("""\
        from . import sibling
        from ..up import thing as t
        from .mod import *
        t.run(sibling.x)
        """, package="pkg.sub") == [
        ("pkg.sub.sibling", 1, 14, "import"), ("pkg.up.thing", 2, 17, "import"), ("pkg.sub.mod.*", 3, 17, "import"),
        ("pkg.up.thing.run", 4, 0, "use"), ("pkg.sub.sibling.x", 4, 6, "use")]


def test_relative_imports_that_climb_out_are_dropped() -> None:
    result = scan_python("from . import x\nx.z()\n", package="")  # a top-level script has no package
    assert result.sites == [] and result.imports == []
    result = scan_python("from ... import y\nfrom . import x\n", package="pkg")
    assert [s.symbol for s in result.sites] == ["pkg.x"]


def test_without_a_package_relative_names_stay_relative_until_resolved() -> None:
    result = scan_python("from . import x\nfrom ..up import t\nfrom .m import *\nx.z(t)\n")
    assert [(s.module, s.symbol, s.kind) for s in result.sites] == [
        (".", ".x", "import"), ("..up", "..up.t", "import"), (".m", ".m.*", "import"),
        (".", ".x.z", "use"), ("..up", "..up.t", "use")]
    assert result.imports == [".", "..up", ".m"]
    resolved = resolve_scan(result, "pkg.sub")
    assert [(s.module, s.symbol) for s in resolved.sites] == [
        ("pkg.sub", "pkg.sub.x"), ("pkg.up", "pkg.up.t"), ("pkg.sub.m", "pkg.sub.m.*"), ("pkg.sub", "pkg.sub.x.z"),
        ("pkg.up", "pkg.up.t")]
    assert resolved.imports == ["pkg.sub", "pkg.up", "pkg.sub.m"]
    assert [s.symbol for s in resolve_scan(result, "pkg").sites] == ["pkg.x", "pkg.m.*", "pkg.x.z"]
    assert FileScan.from_json(result.as_json()) == result


def test_function_locals_shadow_module_imports() -> None:
    assert sites("""\
        import yaml
        def f(yaml):
            return yaml.load(1)
        def g():
            yaml = None
            yaml.load(2)
        def h():
            return yaml.load(3)
        def k():
            global yaml
            yaml = 1
            yaml.dump(4)
        """) == [("yaml", 1, 7, "import"), ("yaml.load", 8, 11, "use"), ("yaml.dump", 12, 4, "use")]


def test_module_level_fallback_assignment_keeps_the_import() -> None:
    assert sites("""\
        try:
            import simplejson as json
        except ImportError:
            json = None
        json.dumps({})
        """) == [("simplejson", 2, 11, "import"), ("simplejson.dumps", 5, 0, "use")]


def test_function_level_import_and_closures() -> None:
    assert sites("""\
        def outer():
            import toml
            def inner():
                return toml.loads(s)
            return inner
        toml.loads(s)
        """) == [("toml", 2, 11, "import"), ("toml.loads", 4, 15, "use")]


def test_class_body_shadows_only_its_own_statements() -> None:
    assert sites("""\
        import yaml
        class C:
            yaml = 1
            x = yaml.real
            def m(self):
                return yaml.dump(self)
        """) == [("yaml", 1, 7, "import"), ("yaml.dump", 6, 15, "use")]


def test_defaults_and_decorators_are_in_the_enclosing_scope() -> None:
    assert sites("""\
        import click
        @click.command()
        def main(click=click.echo, *, n: click.Path = None):
            return click
        """) == [("click", 1, 7, "import"), ("click.command", 2, 1, "use"), ("click.echo", 3, 15, "use"),
                 ("click.Path", 3, 33, "use")]


def test_lambda_parameters_shadow() -> None:
    assert sites("import x\nf = lambda x: x.y\ng = lambda: x.z\n") == [
        ("x", 1, 7, "import"), ("x.z", 3, 12, "use")]


def test_columns_are_utf8_byte_offsets() -> None:
    assert sites("import yaml\ns = 'é'; yaml.dump(s)\n")[1] == ("yaml.dump", 2, 10, "use")


def test_test_case_subclass_is_flagged() -> None:
    assert scan_python("import unittest\nclass T(unittest.TestCase):\n    pass\n").test_case
    assert not scan_python("import unittest\nclass T(object):\n    pass\n").test_case


def test_syntax_error_is_reported_not_raised() -> None:
    result = scan_python("import yaml\ndef broken(:\n")
    assert result.sites == [] and result.error is not None and result.error.startswith("syntax error")
    assert result.error_line == 2


def test_file_without_imports_is_not_parsed() -> None:
    assert scan_python("def broken(:\n").error is None  # nothing to record, so no parse


def test_module_names_follow_packages_and_src_layouts() -> None:
    packages = frozenset({"src/pkg", "src/pkg/sub", "app"})
    assert python_module_name("src/pkg/sub/mod.py", packages) == "pkg.sub.mod"
    assert python_module_name("src/pkg/__init__.py", packages) == "pkg"
    assert python_module_name("app/views.py", packages) == "app.views"
    assert python_module_name("tools/run.py", packages) == "tools.run"
    assert python_module_name("src/loose.py", packages) == "loose"
    assert python_module_name("services/api/app/x.py", frozenset({"services/api/app"})) == "app.x"
    assert python_import_names("services/api/app/x.py", frozenset({"services/api/app"})) == {
        "app.x", "services.api.app.x"}


def test_resolve_relative_refuses_to_climb_out() -> None:
    assert resolve_relative("pkg.sub", 1, None) == "pkg.sub"
    assert resolve_relative("pkg.sub", 2, "x") == "pkg.x"
    assert resolve_relative("pkg", 2, "x") is None
    assert resolve_relative("", 1, "x") is None
    assert resolve_relative(None, 1, "x") is None
