"""A TCCM's flow compiled into a LangGraph subgraph (`compile`) and run per work item: its state nodes
(`states`), side-effects (`effects`), prompts, the facts a condition reads, and the item's result (`finish`)."""
