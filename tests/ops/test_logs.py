"""LOG_FORMAT=json writes one JSON object per line with the call's fields (request id, project, credential,
surface, tool); and no line logged while the API is used, at any level, holds an item's text, a metadata
value, a query or a key."""

import json
import logging

import pytest

from twin.logs import ContextFilter, JsonFormatter, logging_config

TEXT = "Zanzibarquux lives on Maplewood Terrace"
METADATA_VALUE = "meta-Qorvath-9917"
QUERY = "where does Zanzibarquux flibber"
BOGUS_KEY = "tm_notakey_Xyzzy4242plugh"


@pytest.fixture
def json_lines(caplog):
    """Every record logged in the test, formatted as the service's JSON handler writes it."""
    caplog.handler.addFilter(ContextFilter())
    caplog.handler.setFormatter(JsonFormatter())
    with caplog.at_level(logging.DEBUG):
        yield caplog


def test_the_json_format_is_chosen_by_log_format():
    assert logging_config(log_format="json", level="INFO")["handlers"]["console"]["formatter"] == "json"
    assert logging_config(log_format="text", level="INFO")["handlers"]["console"]["formatter"] == "readable"


def test_no_line_holds_a_text_a_query_metadata_or_a_key(api, write_key, json_lines):
    item = {"text": TEXT, "id": "t1", "metadata": {"place": METADATA_VALUE}}
    assert api.post("/v1/memory/add", {"items": [item], "wait": True}).status_code == 200
    api.tool("search", query=QUERY)
    api.call("memory_search", query=QUERY)
    api.tool("grep", pattern="Zanzibarquux")
    refused = api.client.post(
        "/v1/memory/search",
        {"query": QUERY},
        "application/json",
        headers={"Authorization": f"Bearer {BOGUS_KEY}", "X-Twin-Account": "u_1"},
    )
    assert refused.status_code == 401
    lines = json_lines.text.splitlines()
    assert len(lines) > 5
    for line in lines:
        for secret in (TEXT, "Zanzibarquux", METADATA_VALUE, QUERY, BOGUS_KEY, write_key[1]):
            assert secret not in line, line
    parsed = [json.loads(line) for line in lines if line.startswith("{")]
    searched = [line for line in parsed if line.get("tool") == "memory_search" and line.get("status") == 200]
    assert searched, parsed
    assert {line["surface"] for line in searched} == {"http", "mcp"}
    assert all(line["project"] and line["credential"] == write_key[0].prefix for line in searched)
    assert all(line["request_id"] and line["duration_ms"] >= 0 and line["level"] for line in searched)
