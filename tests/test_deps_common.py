"""Shared helpers: names, pins, dev words, graphs, grouping."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from repocontext.deps import common
from repocontext.deps.common import (
    declared,
    exact_pep440,
    guessed_roots,
    is_dev_name,
    lock_graph,
    pep508,
    pypi_name,
    shortest_paths,
)
from repocontext.deps.locks import grouped, row
from repocontext.model import Dependency


def test_names_pins_and_dev_words() -> None:
    assert [pypi_name(n) for n in ("Foo_Bar", "foo.bar", "FOO--bar__baz")] == ["foo-bar", "foo-bar", "foo-bar-baz"]
    assert [exact_pep440(s) for s in ("==1.0", "===abc", "==1.*", ">=1", "==1,<2", "", "bogus")] == [
        "1.0", "abc", None, None, None, None, None]
    assert [is_dev_name(n) for n in ("dev", "test-extras", "Docs", "lint_tools", "s3", "server", "devops")] == [
        True, True, True, True, False, False, False]


def test_pep508_keeps_constraint_as_written() -> None:
    dep = pep508("r.txt", 3, "Foo.Bar [x, y] ( >= 1.0 , < 2 ) ; os_name == 'nt'", True, "sec")
    assert isinstance(dep, Dependency)
    assert (dep.name, dep.constraint, dep.extras, dep.markers, dep.dev, dep.section, dep.line) == (
        "foo-bar", "( >= 1.0 , < 2 )", ["x", "y"], 'os_name == "nt"', True, "sec", 3)


def test_graphs_prefer_production_chains() -> None:
    edges = {"a": {"c"}, "z": {"c", "d"}, "c": {"e"}}
    assert shortest_paths(["z", "a"], edges) == {
        "a": ["a"], "z": ["z"], "c": ["a", "c"], "d": ["z", "d"], "e": ["a", "c", "e"]}
    graph = lock_graph({"a": True, "z": False}, edges)
    assert graph.paths["c"] == ["z", "c"]
    assert (graph.is_dev("c"), graph.is_dev("a"), graph.is_dev("d"), graph.is_dev("unknown")) == (
        False, True, False, False)
    assert guessed_roots({"a", "c", "z", "d", "e"}, edges) == {"a", "z"}


def test_declared_and_grouping_are_deterministic() -> None:
    deps = [
        Dependency(ecosystem="npm", name="b", file="p/package.json", line=2, dev=True),
        Dependency(ecosystem="PyPI", name="b", file="z.txt", line=1),
        Dependency(ecosystem="PyPI", name="a", file="a.txt", line=None),
        Dependency(ecosystem="PyPI", name="b", file="a.txt", line=5, kind="constraint", direct=False),
    ]
    by_name = grouped([row(d) for d in deps])
    assert list(by_name) == ["a", "b"]
    assert [(d["ecosystem"], d["file"]) for d in by_name["b"]] == [("PyPI", "a.txt"), ("PyPI", "z.txt"),
                                                                   ("npm", "p/package.json")]
    assert by_name["a"] == [deps[2].model_dump(exclude_none=True)]
    assert declared(deps) == {"b": False, "a": False}
    assert declared(deps[:1]) == {"b": True}


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="abcXYZ019-_.~ é", max_size=16))
def test_pypi_name_is_packagings_canonical_name(name: str) -> None:
    """The PEP 503 normalisation is written here (packaging.utils imports packaging.tags and logging)."""
    from packaging.utils import canonicalize_name

    assert pypi_name(name) == canonicalize_name(name)


_PIECES = ["foo", "Foo_Bar", "a.b", "x-1", "[", "]", "[a]", "[a, b]", "[ ]", " ", "==", "===", ">=", "<", "~=",
           "!=", "1.0", "1.0.*", "2!1.0+local", "1.0a1", "abc", ",", ";", "@", " ; python_version<'3'", "(", ")",
           "*", ".dev1", "<2", ">=1,<2", "é"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=7).map("".join))
def test_plain_requirements_read_without_packaging_as_packaging_reads_them(text: str) -> None:
    """Every line the fast reader takes gets packaging's answer; the rest go to packaging itself."""
    text = text.strip()
    plain = common._plain508(text)
    if plain is not None:
        assert plain == common._packaging508(text)
    assert common._parse508.__wrapped__(text) == common._packaging508(text)


def test_the_plain_reader_takes_the_common_lines_and_leaves_the_rest() -> None:
    taken = ["requests==2.31.0", "Django>=4.2,<5", "celery[redis, sqs] ~= 5.3", "pkg", "a===weird-1"]
    left = ["pytz; python_version < '3.9'", "pip @ https://x/pip.whl", "foo (>=1.0)", "foo==1.0,", "foo>=1.0.*"]
    assert all(common._plain508(text) is not None for text in taken)
    assert all(common._plain508(text) is None for text in left)
    assert common._parse508("foo>=1.0.*") == common._packaging508("foo>=1.0.*")  # packaging words the error
