"""Per-language scanners for imports and their uses (Python via `ast`; JS/TS and Go via tree-sitter)."""
