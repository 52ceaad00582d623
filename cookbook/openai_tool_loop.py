"""An OpenAI tool-calling agent with agentmem tools, offline.

The real ``openai`` client talks to a rule-based fake model (``agentmem.testing.
FakeOpenAIServer``, an HTTP mock transport), so the loop below is exactly what runs against the
real API: swap ``fake_openai_client()`` for ``OpenAI()``.

    python cookbook/openai_tool_loop.py [--path ./memdata]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from openai import OpenAI

from agentmem import AgentMemory, MemoryBank
from agentmem.testing import FakeOpenAIServer
from agentmem.tools import dispatch, openai_tools


def fake_model(request: dict[str, Any]) -> dict[str, Any]:
    """A scripted stand-in for the model: retain on "Remember", recall on a question."""
    assert all(tool["function"]["strict"] for tool in request["tools"])
    last = request["messages"][-1]
    if last["role"] == "tool":
        result = json.loads(last["content"])
        if "memories" in result:
            top = result["memories"][0]["text"] if result["memories"] else "nothing"
            return {"role": "assistant", "content": f"From memory: {top}"}
        return {"role": "assistant", "content": "Noted, I will remember that."}
    text = last["content"]
    if text.startswith("Remember:"):
        name, arguments = "retain_memory", {"content": text.removeprefix("Remember:").strip()}
        arguments |= {"tags": None, "importance": 0.8}
    else:
        name, arguments = "recall_memory", {"query": text, "top_k": 3, "tags": None}
    call = {"id": f"call_{len(request['messages'])}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(arguments)}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def fake_openai_client() -> OpenAI:
    """The real ``openai`` client, answered in process by ``fake_model``."""
    return FakeOpenAIServer(chat=fake_model).client()


def ask(client: OpenAI, bank: MemoryBank, user_text: str) -> str:
    """One user turn: call the model, run its memory tool calls, until it answers."""
    messages: list[Any] = [
        {"role": "system", "content": "You are an assistant with long-term memory."},
        {"role": "user", "content": user_text},
    ]
    tools = openai_tools(bank)
    while True:
        reply = client.chat.completions.create(model="gpt-4.1-mini", messages=messages, tools=tools)
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            messages.append(dispatch(bank, call))  # {"role": "tool", "tool_call_id": ...}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--path", default=None, help="store directory (default: temporary)")
    args = parser.parse_args()
    client = fake_openai_client()
    with AgentMemory(args.path) as memory:
        bank = memory.bank("openai-agent")
        for turn in (
            "Remember: Alice's invoice INV-20931 is due on March 3.",
            "Remember: Bob prefers to be contacted by email.",
            "When is Alice's invoice INV-20931 due?",
            "How should I contact Bob?",
        ):
            print(f"user:      {turn}")
            print(f"assistant: {ask(client, bank, turn)}")


if __name__ == "__main__":
    main()
