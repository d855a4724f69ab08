"""Plans, edits and patches: applying edits in memory, diffs git applies, the patch gate, `--verify`, `--apply`
(README.md)."""
