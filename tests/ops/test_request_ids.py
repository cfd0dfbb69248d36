"""Every answer says X-Request-Id (the caller's when it is 1 to 128 safe characters, else one made here); every
JSON error body and JSON-RPC error's data names it, and every line logged while the request is served has it."""

import logging
from datetime import datetime, timedelta, timezone

import pytest

from accounts.services import end_user_get_or_create
from memory.models import Item
from memory.selectors import scoped
from twin.logs import ContextFilter, log_context

LONGEST = "r" * 128
YEAR_10000 = datetime(9999, 12, 31, 23, 59, tzinfo=timezone(timedelta(hours=-10)))  # year 10000 in UTC


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


def test_a_read_names_the_requests_of_the_items_it_reads_and_a_failed_item_its_own(api, project, caplog):
    end_user = end_user_get_or_create(project=project, external_id="u_1")
    with log_context(request_id="older-add"), scoped(project.pk, end_user.pk):
        # A row whose read raises every time: its date is past what psycopg reads back (year 10000 in UTC).
        Item.objects.create(end_user=end_user, external_id="bad", kind="note", text="x", at=YEAR_10000)
    caplog.handler.addFilter(ContextFilter())
    with caplog.at_level(logging.INFO):
        api.post("/v1/memory/add", {"items": [{"text": "I adopted a cat.", "id": "good"}]}, **{"X-Request-Id": "add-2"})
    with scoped(project.pk):
        good = Item.objects.get(external_id="good")
        reason = Item.objects.filter(external_id="bad").values_list("failed_reason", flat=True).get()
    assert good.request_id == "add-2" and good.is_read
    assert reason == "DataError in at (added by request older-add)"
    [read] = [record for record in caplog.records if record.getMessage().startswith("Reading a slice")]
    assert read.request_ids == ["add-2"] and good.pk in read.items  # the bad row's date could not be loaded
