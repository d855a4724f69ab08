"""Flows, the language: a task class's own state machine of typed states (seed 002) as a TCCM declares it,
its conditions, its checks and `extends` merge, its Mermaid drawing. Running one (compiled into a LangGraph
subgraph) is planner/run/flowgraph/."""
