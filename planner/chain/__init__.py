"""The planning chain: recipe_match → solved_example_rag → llm_fallback."""
