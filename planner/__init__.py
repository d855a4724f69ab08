"""tccm-planner: task-class context manifests, context bundles and the planner graph."""

__version__ = "0.1.0"
