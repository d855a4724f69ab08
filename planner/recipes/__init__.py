"""Declarative recipes run: ast-grep rules, text replacements, commands; YAML work items. What a TCCM's
`recipes:` and `work_items:` say (and their checks) is planner/tccm/recipes.py."""
