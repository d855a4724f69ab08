"""Recipes through `extends`, and the policy check a `command:` recipe needs."""

from __future__ import annotations

from collections.abc import Sequence

from planner.policy.model import Policy
from planner.tccm import astgrep_rules
from planner.tccm.recipes import Recipe, field_problem


def name_of(recipe: Recipe) -> str:
    return recipe.id.partition("@")[0]


def merge(parent: Sequence[Recipe], child: Sequence[Recipe]) -> tuple[Recipe, ...]:
    """The parent's recipes then the child's; a child recipe with a parent's name (any version) replaces it
    in place, so a child can pin a newer version of one step without restating the others."""
    merged = list(parent)
    index = {name_of(r): i for i, r in enumerate(merged)}
    for recipe in child:
        if name_of(recipe) in index:
            merged[index[name_of(recipe)]] = recipe
        else:
            index[name_of(recipe)] = len(merged)
            merged.append(recipe)
    return tuple(merged)


def bad_rules(declared: Sequence[Recipe]) -> list[tuple[tuple[str | int, ...], str]]:
    """(location, why) of every ast-grep rule that is malformed or that ast-grep itself refuses, checked at
    validation so that each mistake shows at its line, all at once, before any run."""
    found: list[tuple[tuple[str | int, ...], str]] = []
    for i, recipe in enumerate(declared):
        for j, rule in enumerate(recipe.ast_grep or ()):
            problem = field_problem(rule) or astgrep_rules.rule_problem(rule)
            if problem is not None:
                found.append((("recipes", i, "ast-grep", j), f"rule {rule.get('id')!r}: {problem}"))
    return found


def refused_commands(declared: Sequence[Recipe], policy: Policy | None) -> tuple[int, str] | None:
    """(index, why) of the first `command:` recipe the policy does not allow: a command runs a program, so
    the class must grant it explicitly (policy.side_effects: [command]); no policy grants nothing here."""
    allowed = policy is not None and "command" in (policy.limits.side_effects or ())
    for i, recipe in enumerate(declared):
        if recipe.command is not None and not allowed:
            return i, (f"recipe {recipe.id} runs a command, which needs policy.side_effects to include "
                       "'command'")
    return None
