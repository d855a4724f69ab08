"""RepoContext: deterministic repository snapshots made by probes."""
