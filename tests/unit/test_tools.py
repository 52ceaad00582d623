"""OpenAI tool calling: definitions in both API shapes, and dispatch of calls from either."""

from __future__ import annotations

import json

import pytest
from openai.lib._pydantic import to_strict_json_schema
from openai.types.chat import ChatCompletionMessageFunctionToolCall
from openai.types.responses import ResponseFunctionToolCall

import agentmem
from agentmem.testing import HashEmbedder
from agentmem.tools import MEMORY_TOOLS, dispatch, openai_tools, strict_json_schema


@pytest.fixture
def notes(tmp_path):
    with agentmem.AgentMemory(tmp_path / "s", embedder=HashEmbedder()) as mem:
        yield mem.bank("notes")


def _without_titles(schema: dict) -> dict:
    schema = {k: v for k, v in schema.items() if k not in ("title", "description")}
    schema["properties"] = {
        name: {k: v for k, v in prop.items() if k != "title"}
        for name, prop in schema["properties"].items()
    }
    return schema


def test_strict_schemas_match_what_the_openai_sdk_builds_from_the_same_model():
    for tool in MEMORY_TOOLS:
        ours = strict_json_schema(tool.args)
        assert ours == _without_titles(to_strict_json_schema(tool.args))
        assert ours["additionalProperties"] is False
        assert set(ours["required"]) == set(ours["properties"])


def test_chat_and_responses_shapes_carry_the_same_tools(notes):
    chat = openai_tools(notes)
    responses = openai_tools(notes, shape="responses")
    assert [t["function"]["name"] for t in chat] == [t["name"] for t in responses]
    assert [t["name"] for t in responses] == [
        "recall_memory",
        "retain_memory",
        "reflect_memory",
        "forget_memory",
    ]
    for nested, flat in zip(chat, responses, strict=True):
        assert nested["type"] == flat["type"] == "function"
        assert nested["function"] == {k: v for k, v in flat.items() if k != "type"}
        assert flat["strict"] is True
    assert responses[0]["description"].startswith("Search long-term memory")
    recall = responses[0]["parameters"]
    assert recall["properties"]["top_k"]["anyOf"] == [{"type": "integer"}, {"type": "null"}]


def test_tools_can_be_chosen_by_name_and_bad_choices_are_refused(notes):
    assert [t["name"] for t in openai_tools(notes, "responses", names=["recall_memory"])] == [
        "recall_memory"
    ]
    with pytest.raises(agentmem.InvalidInputError, match="unknown memory tools"):
        openai_tools(notes, names=["drop_tables"])
    with pytest.raises(agentmem.InvalidInputError, match="shape"):
        openai_tools(notes, shape="completions")  # type: ignore[arg-type]


def test_reflect_offline_returns_the_evidence_without_an_answer(notes):
    notes.retain("Alice drinks green tea.", mentioned_at="2025-01-01T00:00:00Z")
    assert "reflect_memory" in [t["name"] for t in openai_tools(notes, "responses")]
    call = {"type": "function_call", "call_id": "c1", "name": "reflect_memory"}
    out = dispatch(notes, {**call, "arguments": '{"query": "what does Alice drink?"}'})
    result = json.loads(out["output"])
    assert result["answer"] is None
    assert result["observations"] == []
    assert [m["text"] for m in result["memories"]] == ["Alice drinks green tea."]


def test_dispatch_runs_chat_tool_calls_from_sdk_objects_and_dicts(notes):
    retain_call = ChatCompletionMessageFunctionToolCall(
        id="call_1",
        type="function",
        function={
            "name": "retain_memory",
            "arguments": json.dumps(
                {"content": "The wifi password is hunter2.", "tags": ["office"], "importance": 0.9}
            ),
        },
    )
    reply = dispatch(notes, retain_call)
    assert reply["role"] == "tool" and reply["tool_call_id"] == "call_1"
    stored = json.loads(reply["content"])["stored"]
    assert json.loads(reply["content"])["already_stored"] == []
    memory = notes.get(stored[0]["id"])
    assert memory.text == "The wifi password is hunter2."
    assert memory.tags == ("office",) and memory.importance == 0.9

    recall_call = {
        "id": "call_2",
        "type": "function",
        "function": {
            "name": "recall_memory",
            "arguments": '{"query": "wifi password", "top_k": 3, "tags": null}',
        },
    }
    reply = dispatch(notes, recall_call)
    assert reply["tool_call_id"] == "call_2"
    hits = json.loads(reply["content"])["memories"]
    assert hits[0]["id"] == memory.id
    assert hits[0]["text"] == "The wifi password is hunter2."
    assert 0 < hits[0]["score"] <= 1


def test_dispatch_answers_a_responses_call_in_the_responses_shape(notes):
    notes.retain("Invoice INV-20931 is unpaid.", mentioned_at="2025-01-01T00:00:00Z")
    call = ResponseFunctionToolCall(
        type="function_call",
        call_id="fc_7",
        name="recall_memory",
        arguments='{"query": "INV-20931", "top_k": null, "tags": null}',
    )
    reply = dispatch(notes, call)
    assert set(reply) == {"type", "call_id", "output"}
    assert reply["type"] == "function_call_output" and reply["call_id"] == "fc_7"
    assert "INV-20931" in json.loads(reply["output"])["memories"][0]["text"]


def test_forget_through_dispatch_deletes_the_memory(notes):
    memory = notes.retain("Temporary note.", mentioned_at="2025-01-01T00:00:00Z").memories[0]
    call = {"type": "function_call", "call_id": "c", "name": "forget_memory"}
    reply = dispatch(notes, {**call, "arguments": json.dumps({"memory_ids": [memory.id]})})
    assert json.loads(reply["output"]) == {"deleted": 1}
    with pytest.raises(agentmem.NotFoundError):
        notes.get(memory.id)


def test_forget_of_an_unknown_id_is_an_error_for_the_model_and_deletes_nothing(notes):
    memory = notes.retain("Keep this note.", mentioned_at="2025-01-01T00:00:00Z").memories[0]
    call = {"type": "function_call", "call_id": "c", "name": "forget_memory"}
    arguments = json.dumps({"memory_ids": [memory.id, "no-such-memory"]})
    reply = json.loads(dispatch(notes, {**call, "arguments": arguments})["output"])
    assert reply["error"]["type"] == "NotFoundError"
    assert "no-such-memory" in reply["error"]["message"]
    assert notes.get(memory.id).text == memory.text


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("{not json", "not valid JSON"),
        ('["a list"]', "JSON object"),
        ('{"content": "x", "colour": "red"}', "colour"),
        ('{"tags": ["a"]}', "content"),
        ('{"content": "   "}', "must not be empty"),
        ('{"content": "x", "importance": 7}', "importance"),
    ],
)
def test_mistakes_of_the_model_come_back_as_errors_and_write_nothing(notes, arguments, message):
    call = {"id": "c", "type": "function", "function": {"name": "retain_memory"}}
    reply = dispatch(notes, {**call, "function": {**call["function"], "arguments": arguments}})
    error = json.loads(reply["content"])["error"]
    assert error["type"] == "InvalidInputError"
    assert message in error["message"]
    assert notes.stats()["memories"] == 0


def test_calls_that_are_not_memory_tool_calls_are_refused(notes):
    with pytest.raises(agentmem.InvalidInputError, match="not a memory tool"):
        dispatch(notes, {"id": "c", "function": {"name": "get_weather", "arguments": "{}"}})
    with pytest.raises(agentmem.InvalidInputError, match="not a function tool call"):
        dispatch(notes, {"type": "message", "content": "hi"})
    with pytest.raises(agentmem.InvalidInputError, match="no id"):
        dispatch(notes, {"function": {"name": "recall_memory", "arguments": "{}"}})


RECALL_CALL = {
    "tool_calls": [{"name": "recall_memory", "arguments": {"query": "invoice", "top_k": 3}}]
}


def _loop(client, bank, question):
    """The README's loop: call the model, run its memory tool calls, until it answers."""
    messages = [{"role": "user", "content": question}]
    while True:
        message = (
            client.chat.completions.create(
                model="gpt-4.1-mini", messages=messages, tools=openai_tools(bank)
            )
            .choices[0]
            .message
        )
        if not message.tool_calls:
            return message.content, messages
        messages.append(message.model_dump(exclude_none=True))
        messages += [dispatch(bank, call) for call in message.tool_calls]


def test_the_fake_openai_server_drives_an_ordinary_tool_loop(notes):
    from agentmem.testing import FakeOpenAIServer

    notes.retain("Invoice INV-20931 is still unpaid.", mentioned_at="2025-01-01T00:00:00Z")
    server = FakeOpenAIServer(chat=[RECALL_CALL, "It is unpaid."])
    answer, messages = _loop(server.client(), notes, "Which invoice is unpaid?")
    assert answer == "It is unpaid."
    tool_reply = json.loads(messages[-1]["content"])
    assert "INV-20931" in tool_reply["memories"][0]["text"]
    assert len(server.requests) == 2 and "tool_choice" not in server.requests[0]


def test_the_fake_openai_server_says_what_it_cannot_answer(notes):
    import openai

    from agentmem.testing import FakeOpenAIServer

    with pytest.raises(openai.BadRequestError, match="chat="):
        _loop(FakeOpenAIServer().client(), notes, "Which invoice is unpaid?")
    unknown = {"tool_calls": [{"name": "delete_everything", "arguments": {}}]}
    with pytest.raises(openai.BadRequestError, match="delete_everything"):
        _loop(FakeOpenAIServer(chat=[unknown]).client(), notes, "hello")
    with pytest.raises(openai.BadRequestError, match="no scripted chat reply left"):
        _loop(FakeOpenAIServer(chat=[RECALL_CALL]).client(), notes, "Which invoice?")


async def test_adispatch_runs_an_async_openai_loop(notes):
    from agentmem.testing import FakeOpenAIServer
    from agentmem.tools import adispatch

    notes.retain("Invoice INV-20931 is still unpaid.", mentioned_at="2025-01-01T00:00:00Z")
    client = FakeOpenAIServer(chat=[RECALL_CALL, "Done."]).async_client()
    messages = [{"role": "user", "content": "Which invoice is unpaid?"}]
    first = (
        (
            await client.chat.completions.create(
                model="m", messages=messages, tools=openai_tools(notes)
            )
        )
        .choices[0]
        .message
    )
    replies = [await adispatch(notes, call) for call in first.tool_calls]
    assert replies[0]["role"] == "tool"
    assert "INV-20931" in json.loads(replies[0]["content"])["memories"][0]["text"]
    messages += [first.model_dump(exclude_none=True), *replies]
    final = await client.chat.completions.create(model="m", messages=messages, tools=[])
    assert final.choices[0].message.content == "Done."
