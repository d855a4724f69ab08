"""A langchain-core fake chat model that answers with tool calls, so structured output works."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage


class FakePlanner(GenericFakeChatModel):
    """Returns the queued AIMessages in order; `bind_tools` is accepted (the answers already hold tool calls)."""

    prompts: list[str] = []  # noqa: RUF012 - a pydantic field (copied per instance), not a shared class list

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        self.prompts.append("\n".join(str(m.content) for m in messages))
        return super()._generate(messages, *args, **kwargs)


def plan_message(**plan: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": "LLMPlan", "args": plan, "id": "call-1"}],
                     usage_metadata={"input_tokens": 1200, "output_tokens": 80, "total_tokens": 1280})


def fake_planner(*plans: dict[str, Any]) -> FakePlanner:
    return FakePlanner(messages=iter([plan_message(**p) for p in plans]), prompts=[])
