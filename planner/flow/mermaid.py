"""A flow as a Mermaid flowchart (`planner task-classes show NAME --mermaid`). Each state type has
its own shape; decision exits carry their condition (or description) as the edge label."""

from __future__ import annotations

from planner.flow.model import END, Flow, FlowState

SHAPES = {"action": ('["', '"]'), "decision": ('{"', '"}'), "recall": ('[("', '")]'), "reflection": ('[["', '"]]'),
          "annotation": ('>"', '"]'), "side-effect": ('{{"', '"}}')}


def _text(value: str, limit: int = 60) -> str:
    short = value if len(value) <= limit else value[: limit - 1] + "…"
    for raw, entity in (('"', "#quot;"), ("|", "#124;"), ("<", "#lt;"), (">", "#gt;"), ("\n", " ")):
        short = short.replace(raw, entity)  # Mermaid reads these as syntax or HTML otherwise
    return short


def _label(name: str, spec: FlowState) -> str:
    detail = spec.effect or spec.choose or ""
    return f"{name}<br/><i>{spec.type}{': ' + detail if detail else ''}</i>"


def _id(name: str) -> str:
    return "end_" if name == END else name.replace("-", "_")


def _edges(name: str, spec: FlowState) -> list[str]:
    out = []
    for transition in spec.transitions or ():
        label = _text(transition.when or transition.description or "")
        out.append(f"  {_id(name)} -->|{label}| {_id(transition.next)}")
    if spec.default:
        out.append(f"  {_id(name)} -->|default| {_id(spec.default)}")
    if spec.next:
        out.append(f"  {_id(name)} --> {_id(spec.next)}")
    return out


def render(flow: Flow) -> str:
    lines = ["flowchart TD", "  start_((start))", f"  start_ --> {_id(flow.start)}"]
    for name, spec in flow.states.items():
        left, right = SHAPES[spec.type]
        lines.append(f"  {_id(name)}{left}{_label(name, spec)}{right}")
    for name, spec in flow.states.items():
        lines += _edges(name, spec)
    lines.append("  end_((end))")
    if flow.max_steps:
        lines.append(f"  %% at most {flow.max_steps} steps")
    return "\n".join(lines) + "\n"
