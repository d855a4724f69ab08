"""Per-language scanners for imports and their uses (Python via `ast`; JS/TS, Go, Rust, Ruby, PHP, Java/Kotlin and
C# via tree-sitter), and how a module reference maps onto a package (`distributions`, `packages`)."""
