"""A LangChain tool-calling agent with agentmem's memory tools, offline.

``create_memory_tools(bank)`` gives ``StructuredTool``s; any chat model with ``bind_tools``
drives them. A scripted chat model stands in for the LLM here, so the loop is the one you
run with ``ChatOpenAI`` or ``ChatAnthropic`` (or hand the tools to
``langchain.agents.create_agent``). It also shows ``AgentMemRetriever``.

    python cookbook/langchain_agent.py [--path ./memdata]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from agentmem import AgentMemory
from langchain_agentmem import AgentMemRetriever, create_memory_tools


class ScriptedChatModel(BaseChatModel):
    """Stands in for an LLM: retains on "Remember:", recalls on a question, then answers."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, **kwargs: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            result = json.loads(last.content)
            memories = result.get("memories")
            text = f"From memory: {memories[0]['text']}" if memories else "Noted."
            reply = AIMessage(content=text)
        elif last.content.startswith("Remember:"):
            fact = last.content.removeprefix("Remember:").strip()
            call = {"name": "retain_memory", "args": {"content": fact}, "id": "call_retain"}
            reply = AIMessage(content="", tool_calls=[call])
        else:
            call = {"name": "recall_memory", "args": {"query": last.content}, "id": "call_recall"}
            reply = AIMessage(content="", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def run_agent(model: BaseChatModel, tools: list, user_text: str) -> str:
    """The tool-calling loop: call the model, run the tools it asks for, until it answers."""
    by_name = {tool.name: tool for tool in tools}
    bound = model.bind_tools(tools)
    messages: list[BaseMessage] = [HumanMessage(user_text)]
    while True:
        reply = bound.invoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            return str(reply.content)
        for call in reply.tool_calls:
            messages.append(by_name[call["name"]].invoke(call))  # a ToolMessage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--path", default=None, help="store directory (default: temporary)")
    args = parser.parse_args()
    with AgentMemory(args.path) as memory:
        bank = memory.bank("langchain-agent")
        tools = create_memory_tools(bank)  # recall_memory, retain_memory, forget_memory
        model = ScriptedChatModel()
        for turn in (
            "Remember: The staging database password rotates every Monday.",
            "Remember: Dana leads the payments team.",
            "Who leads the payments team?",
        ):
            print(f"user:  {turn}")
            print(f"agent: {run_agent(model, tools, turn)}")

        retriever = AgentMemRetriever(bank=bank, k=2)
        for doc in retriever.invoke("When does the password rotate?"):
            print(f"retrieved ({doc.metadata['score']:.2f}): {doc.page_content}")


if __name__ == "__main__":
    main()
