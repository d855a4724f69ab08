"""A run of the supervisor graph: dispatch, the graph and its nodes, state, finalize, the task-class contract
and what an agent sees of a run (README.md)."""
