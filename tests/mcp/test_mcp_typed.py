"""Typed answers at 2026-07-28 (each tool's outputSchema, its answer as structuredContent beside the text), the
older revisions' text-only answers untouched, and the stdio server serving resources and prompts as /v1/mcp."""

import json

from jsonschema import Draft202012Validator

from accounts.auth import Context
from accounts.models import Access
from mcp_server import protocol
from memory.tools import stdio_tools
from tests.conftest import stdio_answer
from tests.mcp.test_mcp_2026 import META, modern
from tests.mcp.test_mcp_resources import CAT, MOVE

CALLS: dict[str, dict] = {
    "memory_search": {"query": "cat's name"},
    "memory_grep": {"pattern": "Miso"},
    "memory_ls": {},
    "memory_latest": {"k": 2},
    "memory_overview": {},
    "memory_history": {"subject": "Alice"},
    "memory_add": {"items": [{"text": "Alice likes figs.", "id": "figs"}], "wait": True},
}


def test_each_tool_declares_its_output_and_answers_it_typed_in_the_new_era_only(api):
    api.add(CAT, MOVE)
    tools = {t["name"]: t for t in modern(api, "tools/list").json()["result"]["tools"]}
    assert all(tool["outputSchema"]["type"] == "object" for tool in tools.values()), "every tool declares one"
    assert not any("outputSchema" in t for t in api.mcp("tools/list").json()["result"]["tools"])
    hit = json.loads(api.call("memory_grep", pattern="Miso")["result"]["content"][0]["text"])["hits"][0]
    calls = {**CALLS, "memory_read": {"path": hit["path"]}, "memory_around": {"passage_id": hit["passage_id"]}}
    assert set(calls) == set(tools)
    for name, arguments in calls.items():
        params = {"name": name, "arguments": arguments}
        result = modern(api, "tools/call", params, **{"Mcp-Name": name}).json()["result"]
        if result["isError"]:  # memory cannot answer (history before any fact): text alone, as an error
            assert "structuredContent" not in result and name == "memory_history", result
            continue
        assert result["structuredContent"] == json.loads(result["content"][0]["text"])
        Draft202012Validator(tools[name]["outputSchema"]).validate(result["structuredContent"])
        old = api.call(name, **arguments)["result"]
        assert set(old) == {"content", "isError"}, "the older revisions answer text alone"


def test_the_stdio_server_serves_resources_and_prompts_as_the_web_does(api, project):
    api.add(CAT)
    context = Context(project=project, account="u_1", access=Access.READ)
    session = protocol.Session(context=context, tools=stdio_tools(context), surface="stdio")

    def ask(method, params=None):
        line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {**(params or {}), "_meta": META}})
        return stdio_answer(session, line)

    listed = ask("resources/list")["result"]
    assert listed["resources"] == api.mcp("resources/list").json()["result"]["resources"]
    assert listed["ttlMs"] == 300000 and listed["cacheScope"] == "private"
    uri = listed["resources"][-1]["uri"]
    assert (
        ask("resources/read", {"uri": uri})["result"]["contents"][0]["text"]
        == (api.mcp("resources/read", {"uri": uri}).json()["result"]["contents"][0]["text"])
    )
    assert [p["name"] for p in ask("prompts/list")["result"]["prompts"]] == ["recall", "catch_up", "forget_about"]
    assert ask("prompts/get", {"name": "remember"})["error"]["data"]["error"] == "insufficient_scope"
    assert ask("resources/read", {"uri": "twin-memory://nothing.md"})["error"]["code"] == -32602


def test_a_subject_file_is_listed_read_and_completed_by_its_name(api):
    api.add({"text": "My sister Ines moved to Porto in March.", "id": "ines", "at": "2026-03-02"})
    subjects = [r for r in api.mcp("resources/list").json()["result"]["resources"] if r["name"].startswith("subjects/")]
    assert subjects, "the read recorded a subject"
    slug = subjects[0]["name"].removeprefix("subjects/").removesuffix(".md")
    params = {
        "ref": {"type": "ref/resource", "uri": "twin-memory://subjects/{subject}.md"},
        "argument": {"name": "subject", "value": subjects[0]["title"][:2].lower()},
    }
    assert slug in api.mcp("completion/complete", params).json()["result"]["completion"]["values"]
    text = api.mcp("resources/read", {"uri": subjects[0]["uri"]}).json()["result"]["contents"][0]["text"]
    assert text == api.tool("read", path=subjects[0]["name"]).json()["text"] and "## History" in text
