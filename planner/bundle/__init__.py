"""Context Bundles: what a task class's worker sees, under a hard budget, with provenance."""

from planner.bundle.builder import build
from planner.bundle.model import Bundle, BundleEntry, Totals
from planner.bundle.view import RepoView, open_view

__all__ = ["Bundle", "BundleEntry", "RepoView", "Totals", "build", "open_view"]
