"""Task-Class Context Manifests: schema, strict YAML loading, registry."""

from planner.tccm.model import TCCM, Budget, Entry, TCCMDocument
from planner.tccm.registry import Registry

__all__ = ["TCCM", "Budget", "Entry", "Registry", "TCCMDocument"]
