"""Package manifests and lockfiles parsed into `Dependency` records (see `repocontext.probes.dependencies`).

One module per format family; every parser takes text (read by the probe
through `ProbeContext.read_text`) and returns records plus issues, never
raising for bad content.
"""

from __future__ import annotations

from repocontext.deps.imports import import_names

__all__ = ["import_names"]
