"""Flows: a task class's own state machine of typed states (seed 002), compiled into a LangGraph subgraph."""
