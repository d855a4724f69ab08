"""Declarative recipes from a TCCM: ast-grep rules, text replacements, commands; YAML work items."""
