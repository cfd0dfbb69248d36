"""Every answer a tool's route gives validates against the answer schema /v1/schema publishes for it, held
exact: no key the schema does not name, no null where it does not allow one. The routes run over a small
memory made with real adds, in each of the shapes their answers take."""

from typing import Any

import jsonschema
import pytest
from django.test import Client

from memory.tools import TOOLS

ROUTES = [tool for tool in TOOLS if not tool.local_only]


def exact(schema):
    """The schema as JSON Schema proper and held exact: `nullable` as a null type, and an object with named
    properties closed to others (the published schema stays open, so a later key breaks no client)."""
    if isinstance(schema, list):
        return [exact(each) for each in schema]
    if not isinstance(schema, dict):
        return schema
    out = {name: exact(value) for name, value in schema.items() if name != "nullable"}
    if schema.get("nullable"):
        out["type"] = [schema["type"], "null"]
    if "properties" in schema and "additionalProperties" not in schema:
        out["additionalProperties"] = False
    return out


@pytest.fixture
def published(db):
    document = Client().get("/v1/schema", headers={"Accept": "application/json"}).json()
    answers = {}
    for tool in ROUTES:
        ok = document["paths"][f"/v1/memory/{tool.route}"]["post"]["responses"]["200"]
        answers[tool.route] = exact(ok["content"]["application/json"]["schema"])
    return answers


@pytest.fixture
def held(api):
    api.add(
        {"text": "I live in Porto.", "id": "home1", "at": "2024-01-10", "author": "Alice Chen", "role": "user"},
        {"text": "I moved to Lisbon on 2025-03-01.", "id": "home2", "at": "2025-03-10", "author": "Alice Chen"},
        {"text": "Planning notes for the launch.", "kind": "document", "title": "Launch", "expires": "2099-01-01"},
        {"text": "Hi there", "kind": "message", "session": "s1", "author": "Bob", "role": "user"},
        {"text": "Hello Bob", "kind": "message", "session": "s1", "author": "Assistant", "role": "assistant"},
    )
    api.add({"text": "I live in Faro.", "id": "home1", "at": "2024-01-10", "author": "Alice Chen"})
    return api


def answers_of(api):
    """(route, status, answer) for calls in every shape, over the memory `held` made."""
    thread = api.tool("ls", path="passages/memory/messages/").json()["children"][0]["path"]
    passage = api.tool("latest", k=1, place="messages").json()["passages"][0]["passage_id"]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search", {"query": "Where does Alice live?"}),
        ("search", {"query": "Where does Alice live?", "before": "2025-01-01"}),
        ("search", {"query": "launch", "scope": "passages/memory/documents"}),
        ("search", {"query": "launch", "after": "2020-01-01"}),
        ("grep", {"pattern": "porto"}),
        ("grep", {"pattern": "hello", "scope": "passages/", "limit": 1}),
        ("read", {"path": "index.md"}),
        ("read", {"path": api.tool("ls", path="subjects/").json()["children"][0]["path"]}),
        ("read", {"path": api.tool("ls", path=thread).json()["children"][0]["path"]}),
        ("ls", {}),
        ("ls", {"path": "subjects/"}),
        ("ls", {"path": "passages/"}),
        ("ls", {"path": "passages/memory/"}),
        ("ls", {"path": "passages/memory/documents/"}),
        ("ls", {"path": thread}),
        ("around", {"passage_id": passage, "width": 1}),
        ("latest", {}),
        ("latest", {"place": "documents", "after": "2000-01-01", "before": "2100-01-01"}),
        ("overview", {}),
        ("history", {"subject": "Alice Chen"}),
        ("history", {"subject": "Alice", "attribute": "home_city"}),
        ("versions", {"id": "home1"}),
        ("versions", {"id": "home2"}),
    ]
    for route, arguments in calls:
        response = api.tool(route, **arguments)
        yield route, response.status_code, response.json()


def test_every_read_answer_validates_against_its_published_schema(held, published):
    seen = set()
    for route, status, answer in answers_of(held):
        assert status == 200, (route, answer)
        jsonschema.validate(answer, published[route])
        seen.add(route)
    assert seen == {tool.route for tool in ROUTES if tool.answer_schema and not tool.writes}
    # The shapes that are sometimes absent were met: a brief's known facts and as_of, a retraction, a version.
    brief = held.tool("search", query="Where does Alice live?", before="2025-01-01").json()
    assert brief["as_of"] == "2025-01-01" and brief["known"]
    chain = held.tool("history", subject="Alice Chen", attribute="home_city").json()["chain"]
    assert any(entry["retraction"] == "edited" for entry in chain)
    assert held.tool("versions", id="home1").json()["versions"]


def test_a_brief_with_a_written_answer_validates(api, published, fake_llm):
    api.add({"text": "I live in Lisbon."})
    fake_llm.reply("Alice lives in Lisbon.")
    written = api.tool("search", query="Where do I live?").json()
    assert written["answer"]["text"] == "Alice lives in Lisbon."
    jsonschema.validate(written, published["search"])


def test_the_writing_routes_answers_validate_too(api, published):
    added = api.add({"text": "I live in Porto.", "id": "a"}, {"text": "I work at Acme."}, {"text": "I work at Acme."})
    assert [item["status"] for item in added["items"]] == ["added", "added", "duplicate"]
    jsonschema.validate(added, published["add"])
    writes: list[tuple[str, dict[str, Any]]] = [
        ("correct", {"id": "a", "text": "I live in Braga."}),
        ("forget", {"ids": ["a"]}),
        ("forget", {"all": True}),
    ]
    for route, arguments in writes:
        response = api.tool(route, **arguments)
        assert response.status_code == 200, response.content
        jsonschema.validate(response.json(), published[route])


def test_every_route_publishes_an_answer_schema(published):
    assert all(published[tool.route].get("properties") for tool in ROUTES)
