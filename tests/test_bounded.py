"""repocontext.bounded: what a repository brings is parsed with limits (aliases, depth, size), and a file
within them parses exactly as the plain loaders parse it."""

from __future__ import annotations

import json
import tomllib

import pytest
import yaml

from repocontext import bounded


def alias_bomb(levels: int = 10, width: int = 9, indent: str = "") -> str:
    """The "billion laughs": width**levels strings once expanded, a few hundred bytes as written."""
    lines = [f'{indent}a0: &a0 [{", ".join(["lol"] * width)}]']
    lines += [f"{indent}a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def nested_flow(depth: int) -> str:
    return "a: " + "[" * depth + "]" * depth + "\n"


@pytest.mark.parametrize("parse", [bounded.compose, bounded.load, lambda t: list(bounded.load_all(t)),
                                   lambda t: list(bounded.compose_all(t))])
def test_an_alias_bomb_is_refused_at_once_with_its_line(parse) -> None:
    text = "services:\n  web:\n    image: nginx\n" + alias_bomb() + "services2: *a9\n"
    with pytest.raises(bounded.LimitExceeded) as caught:  # how fast: bench/failfast.py
        parse(text)
    assert "alias" in caught.value.cause and caught.value.line is not None


def test_ordinary_anchors_and_merge_keys_load_as_the_plain_loader_loads_them() -> None:
    text = ("x-common: &common\n  restart: always\n  environment: {A: '1'}\n"
            "services:\n  web:\n    <<: *common\n    image: nginx\n    command: sh -c 'a && b'\n"
            "  db:\n    <<: *common\n    image: postgres\n")
    assert bounded.load(text) == yaml.load(text, Loader=yaml.SafeLoader)


def test_an_alias_that_contains_itself_is_refused() -> None:
    with pytest.raises(bounded.LimitExceeded, match="contains it"):
        bounded.compose("a: &x [1, *x]\n")


def test_nesting_is_capped_below_and_above_libyamls_own_cap() -> None:
    assert bounded.load(nested_flow(150)) is not None
    with pytest.raises(bounded.LimitExceeded, match="deeper than 200"):
        bounded.load(nested_flow(300))
    with pytest.raises(yaml.YAMLError, match="maximum nesting depth"):  # libyaml stops at 1,000 itself
        bounded.load(nested_flow(5000))
    block = "".join(f"{' ' * i}k{i}:\n" for i in range(250)) + " " * 250 + "v\n"
    with pytest.raises(bounded.LimitExceeded) as caught:
        bounded.compose(block)
    assert caught.value.line == 201


def test_depth_through_aliases_counts_where_the_alias_is_used() -> None:
    limits = bounded.Limits(max_depth=3)
    bounded.compose("a: &x [[1]]\nb: *x\n", limits)
    with pytest.raises(bounded.LimitExceeded):
        bounded.compose("a: &x [[1]]\nb: [*x]\n", limits)


def test_the_pure_python_loader_ends_in_a_limit_not_a_recursion_error() -> None:
    with pytest.raises(bounded.LimitExceeded):
        bounded.compose(nested_flow(3000), loader_class=yaml.SafeLoader)


def test_size_and_document_count_are_capped() -> None:
    with pytest.raises(bounded.LimitExceeded, match="larger than 10 bytes"):
        bounded.load("a: 123456789\n", bounded.Limits(max_bytes=10))
    with pytest.raises(bounded.LimitExceeded, match="more than 2 YAML documents"):
        list(bounded.load_all("a: 1\n---\nb: 2\n---\nc: 3\n", bounded.Limits(max_documents=2)))


def test_anchor_scan() -> None:
    assert bounded.has_anchor("a: &x 1\n") and bounded.has_anchor("- &x\n") and bounded.has_anchor("[&x 1]")
    assert bounded.has_anchor(b"k: &anchor v")
    assert not bounded.has_anchor("run: make && make test\nurl: http://x/?a=1&b=2\n")


def test_a_shell_ampersand_costs_nothing_but_the_alias_aware_walk() -> None:
    text = "cmd: a & b\nlist: [x &y]\n"
    assert bounded.load(text) == yaml.safe_load(text)


def test_json_depth_and_size() -> None:
    assert bounded.json_loads('{"a": [[1]]}') == {"a": [[1]]}
    with pytest.raises(bounded.LimitExceeded, match="deeper than 200"):
        bounded.json_loads("[" * 300 + "]" * 300)
    with pytest.raises(bounded.LimitExceeded):  # past Python's recursion limit in the C decoder
        bounded.json_loads("[" * 100_000 + "]" * 100_000)
    with pytest.raises(bounded.LimitExceeded, match="larger"):
        bounded.json_loads(b'"' + b"x" * 5_000_000 + b'"')
    with pytest.raises(json.JSONDecodeError):
        bounded.json_loads("{")
    assert bounded.json_loads('{"s": "' + "[" * 500 + '"}') == {"s": "[" * 500}  # brackets in strings


def test_toml_depth_from_arrays_and_from_dotted_keys() -> None:
    assert bounded.toml_loads('a.b = [[1]]\n') == {"a": {"b": [[1]]}}
    with pytest.raises(bounded.LimitExceeded):
        bounded.toml_loads("a = " + "[" * 3000 + "]" * 3000 + "\n")
    with pytest.raises(bounded.LimitExceeded, match="deeper than 200"):
        bounded.toml_loads("k" + ".k" * 300 + " = 1\n")
    with pytest.raises(tomllib.TOMLDecodeError):
        bounded.toml_loads("a = \n")


def test_an_anchor_the_scan_misses_still_meets_the_alias_aware_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded, "has_anchor", lambda text: False)
    with pytest.raises(bounded.LimitExceeded, match="alias"):
        bounded.compose(alias_bomb() + "b: *a9\n")
