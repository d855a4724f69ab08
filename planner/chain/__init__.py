"""The planning chain's parts: work items and their results (`work`), the recipe protocol a task class's
recipes follow (`recipes`), the LLM stage (`llm`). Its nodes (recipe_match → solved_example_rag →
llm_fallback) are planner/run/stages.py."""
