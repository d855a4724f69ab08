"""Deterministic decision conditions over a flow's run state.

    verify.failed                    truthy path
    not plan.exists
    plan.edits.count > 0             `.count` is the length of a list, mapping or text
    visits.propose < 3 and inputs.mode == "strict"

Paths start at one of ROOTS (see facts.py for what each holds). Operators: == != > >= < <=,
`not`, `and`, `or` (and binds tighter). Literals: numbers, true/false/null, quoted or bare words.
A missing path is null: it is falsy and compares unequal to everything else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

ROOTS: tuple[str, ...] = ("item", "inputs", "plan", "apply", "verify", "regenerate", "regather", "steps", "visits",
                          "notes", "recalled", "action")
OPS = ("==", "!=", ">=", "<=", ">", "<")
_TOKEN = re.compile(r"\s*(==|!=|>=|<=|>|<|\"[^\"]*\"|'[^']*'|[A-Za-z0-9_.@/:+-]+)")
_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*")


class ConditionError(ValueError):
    pass


def _tokens(text: str) -> list[str]:
    out, at = [], 0
    text = text.strip()
    while at < len(text):
        found = _TOKEN.match(text, at)
        if not found or not found.group(1):
            raise ConditionError(f"cannot read {text[at:].strip()!r} in condition {text!r}")
        out.append(found.group(1))
        at = found.end()
    if not out:
        raise ConditionError("condition is empty")
    return out


def _literal(token: str) -> Any:
    if token[0] in "\"'":
        return token[1:-1]
    lowered = token.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "none"):
        return None
    try:
        return float(token) if "." in token else int(token)
    except ValueError:
        return token


def _term(tokens: list[str]) -> tuple[Any, ...]:
    """[not] path [op literal] → ("not"?, path, op, literal)."""
    negate = tokens[:1] == ["not"]
    body = tokens[1:] if negate else tokens
    if len(body) not in (1, 3) or not _PATH.fullmatch(body[0]) or (len(body) == 3 and body[1] not in OPS):
        raise ConditionError(f"expected 'PATH' or 'PATH OP VALUE', got {' '.join(tokens)!r}")
    root = body[0].split(".")[0]
    if root not in ROOTS:
        raise ConditionError(f"unknown name {root!r} (known: {', '.join(ROOTS)})")
    if len(body) == 1:
        return (negate, body[0], None, None)
    return (negate, body[0], body[1], _literal(body[2]))


def parse(text: str) -> list[list[tuple[Any, ...]]]:
    """Disjunctive form: a list of `or` branches, each a list of `and`-ed terms."""
    branches: list[list[tuple[Any, ...]]] = [[]]
    current: list[str] = []
    for token in [*_tokens(text), "and"]:
        if token in ("and", "or"):
            if not current:
                raise ConditionError(f"'{token}' without a condition before it in {text!r}")
            branches[-1].append(_term(current))
            current = []
            if token == "or":
                branches.append([])
        else:
            current.append(token)
    return branches


def lookup(facts: Mapping[str, Any], path: str) -> Any:
    value: Any = facts
    for part in path.split("."):
        if part == "count" and isinstance(value, list | dict | str):
            value = len(value)
        elif isinstance(value, Mapping):
            value = value.get(part)
        else:
            return None
    return value


def _compare(value: Any, op: str, expected: Any) -> bool:
    if op in ("==", "!="):
        same = value == expected or (isinstance(expected, str) and str(value) == expected and value is not None)
        return same if op == "==" else not same
    if not isinstance(value, int | float) or not isinstance(expected, int | float) or isinstance(value, bool):
        return False
    return {"<": value < expected, "<=": value <= expected, ">": value > expected, ">=": value >= expected}[op]


def evaluate(text: str, facts: Mapping[str, Any]) -> bool:
    return any(all(_holds(term, facts) for term in branch) for branch in parse(text))


def _holds(term: tuple[Any, ...], facts: Mapping[str, Any]) -> bool:
    negate, path, op, expected = term
    value = lookup(facts, path)
    result = bool(value) if op is None else _compare(value, op, expected)
    return result != negate
