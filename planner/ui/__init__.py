"""A read-only local web UI over PLANNER_HOME: runs, bundles and provenance (`planner ui`)."""
