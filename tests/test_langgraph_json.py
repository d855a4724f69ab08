"""langgraph.json points LangGraph Studio / `langgraph dev` at a graph that really compiles."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_langgraph_json_graph_loads() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text())
    target = config["graphs"]["planner"]
    file, _, factory = target.partition(":")
    spec = importlib.util.spec_from_file_location("studio_graph_module", ROOT / file)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    graph = getattr(module, factory)()
    nodes = set(graph.get_graph().nodes)
    assert {"load_tccm", "build_bundle", "split", "work", "join", "verify", "finalize"} <= nodes
    assert (ROOT / config["env"]).is_file()
