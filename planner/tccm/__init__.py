"""Task-Class Context Manifests: schema, strict YAML loading, registry.

Imports nothing: `model` (TCCM, Budget, TCCMDocument), `entry` (Entry, key syntax) and `registry` (Registry) are
imported by name, so a submodule never imports its own package's re-exports (no package ↔ submodule circle)."""
