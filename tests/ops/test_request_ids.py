"""Every answer says X-Request-Id (the caller's when it is 1 to 128 safe characters, else one made here); every
JSON error body and JSON-RPC error's data names it, and every line logged while the request is served has it."""

import logging

import pytest

from twin.logs import ContextFilter

LONGEST = "r" * 128


@pytest.mark.parametrize("sent", ["abc-123", "trace:7f/4=+@x.y_z", LONGEST])
def test_a_safe_id_the_caller_sends_comes_back(api, sent):
    response = api.get("/v1/me", **{"X-Request-Id": sent})
    assert response.status_code == 200 and response["X-Request-Id"] == sent


@pytest.mark.parametrize("sent", ["", "r" * 129, "has space", 'quote"d', "ünïcode", "semi;colon"])
def test_an_unsafe_id_is_replaced_by_one_made_here(api, sent):
    response = api.get("/v1/me", **{"X-Request-Id": sent})
    made = response["X-Request-Id"]
    assert made != sent and len(made) == 32 and made.isalnum()


def test_each_request_gets_an_id_of_its_own(api):
    assert api.get("/v1/me")["X-Request-Id"] != api.get("/v1/me")["X-Request-Id"]


def test_a_refusal_before_any_view_carries_it_in_header_and_body(api):
    response = api.get("/v1/me", HTTP_AUTHORIZATION="x", **{"X-Request-Id": "mine-1"})
    refused = api.client.get("/v1/me", headers={"Authorization": "Bearer tm_nope", "X-Request-Id": "mine-2"})
    assert response["X-Request-Id"] == "mine-1"
    assert refused.status_code == 401 and refused["X-Request-Id"] == "mine-2"
    assert refused.json()["request_id"] == "mine-2" and refused.json()["error"]


def test_a_tool_error_over_http_names_the_request(api):
    response = api.post("/v1/memory/search", {"query": ""}, **{"X-Request-Id": "bad-args"})
    assert response.status_code == 400
    assert response.json()["request_id"] == "bad-args" and response.json()["field"]


def test_an_oversized_body_is_refused_naming_the_request(api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10
    response = api.post("/v1/memory/search", {"query": "a long enough body"}, **{"X-Request-Id": "too-big"})
    assert response.status_code == 413 and response.json()["request_id"] == "too-big"


def test_a_json_rpc_error_names_the_request_in_its_data(api):
    response = api.mcp("tools/call", {"name": "memory_nope", "arguments": {}}, **{"X-Request-Id": "rpc-1"})
    error = response.json()["error"]
    assert response["X-Request-Id"] == "rpc-1" and error["data"]["request_id"] == "rpc-1"


def test_every_line_logged_while_serving_names_the_request(api, caplog):
    caplog.handler.addFilter(ContextFilter())  # as the service's own handler has it (twin/logs.py)
    with caplog.at_level(logging.DEBUG):
        api.post("/v1/memory/search", {"query": "where"}, **{"X-Request-Id": "logged-1"})
    assert caplog.records
    assert {getattr(record, "request_id", None) for record in caplog.records} == {"logged-1"}
