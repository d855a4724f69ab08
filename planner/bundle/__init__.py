"""Context Bundles: what a task class's worker sees, under a hard budget, with provenance.

Imports nothing: `model` (Bundle, BundleEntry, Totals), `view` (RepoView, open_view) and `builder` (build) are
imported by name, so a submodule never imports its own package's re-exports (no package ↔ submodule circle)."""
