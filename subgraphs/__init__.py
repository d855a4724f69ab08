"""One LangGraph subgraph per task class, plus a generic one."""
