"""No 500 for bad input: each input an attacker sent that once answered 500 is refused by name (400 or the
JSON-RPC error the wire document gives), and nothing is stored for it."""

import logging
from typing import Any

import pytest
from django.test import Client

from accounts.auth import Context
from accounts.models import Connection
from mcp_server import protocol as rpc
from memory.limits import JSON_DEPTH_MAX
from memory.models import Item, RecentError
from memory.selectors import scoped
from memory.tools import stdio_tools
from tests.conftest import stdio_answer
from tests.console import html, logged_in
from tests.oauth_flow import authorize_query, card_post_data, fresh_address, pkce, registered

DEEP = "[" * 1000 + "]" * 1000
LONE = '"\\ud800"'  # a lone surrogate, as JSON escapes it


def nested(levels: int):
    value: object = "x"
    for _ in range(levels - 1):
        value = [value]
    return value


def raw_post(client_or_api, path: str, body: str, **headers):
    if isinstance(client_or_api, Client):
        client = client_or_api
    else:
        client, headers = client_or_api.client, client_or_api.headers(**headers)
    return client.post(path, data=body, content_type="application/json", headers=headers)


@pytest.mark.parametrize("route", ["/v1/memory/add", "/v1/memory/search", "/v1/memory/forget"])
def test_json_nested_past_the_bound_is_refused_on_the_memory_routes(api, route):
    response = raw_post(api, route, DEEP)
    assert response.status_code == 400 and response.json()["error"] == "invalid_json"
    assert response.json()["field"] == "body" and response.json()["bound"] == JSON_DEPTH_MAX


def test_the_nesting_bound_is_exact(api):
    metadata = {"a": nested(JSON_DEPTH_MAX - 3)}  # body > items > item > metadata > a: the bound itself
    assert api.tool("add", items=[{"text": "x", "metadata": metadata}]).status_code == 200
    too_deep = {"a": nested(JSON_DEPTH_MAX - 2)}
    assert api.tool("add", items=[{"text": "x", "metadata": too_deep}]).status_code == 400


def test_json_nested_past_the_bound_is_refused_over_mcp_and_at_registration(api):
    response = raw_post(api, "/v1/mcp", '{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": ' + DEEP + "}")
    assert response.status_code == 400 and response.json()["error"]["code"] == -32700
    assert response.json()["error"]["data"]["field"] == "body"
    registration = raw_post(Client(), "/oauth/register", '{"client_name": ' + DEEP + "}", REMOTE_ADDR=fresh_address())
    assert registration.status_code == 400 and registration.json()["error"] == "invalid_client_metadata"


@pytest.mark.parametrize(
    "route, body, field",
    [
        ("search", {"query": "\ud800"}, "query"),
        ("grep", {"pattern": "a\udfffb"}, "pattern"),
        ("add", {"items": [{"text": "ok"}, {"text": "x", "author": "\ud800"}]}, "items[1].author"),
        ("add", {"items": [{"text": "x", "metadata": {"k": ["\ud800"]}}]}, "items[0].metadata.k[0]"),
    ],
)
def test_a_lone_surrogate_is_refused_by_field(api, project, route, body, field):
    response = api.post(f"/v1/memory/{route}", body)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_arguments" and response.json()["field"] == field
    with scoped(project.pk):
        assert not Item.objects.exists()


def test_a_lone_surrogate_in_an_mcp_request_id_is_refused_without_echo(api):
    response = raw_post(api, "/v1/mcp", '{"jsonrpc": "2.0", "id": ' + LONE + ', "method": "ping"}')
    assert response.status_code == 400
    answer = response.json()
    assert answer["id"] is None and answer["error"]["code"] == -32600 and answer["error"]["data"]["field"] == "id"


def test_a_tool_name_that_is_not_a_string_is_invalid_params(api):
    for name in ({"a": 1}, ["memory_search"], 7, None):
        answer = api.mcp("tools/call", {"name": name, "arguments": {}}).json()
        assert answer["error"]["code"] == -32602 and answer["error"]["data"]["field"] == "name"


def test_registration_refuses_a_lone_surrogate_by_field(db):
    for body, field in [
        ('{"client_name": ' + LONE + ', "redirect_uris": ["https://app.example/cb"]}', "client_name"),
        ('{"redirect_uris": ["https://app.example/cb", ' + LONE + "]}", "redirect_uris[1]"),
    ]:
        response = raw_post(Client(), "/oauth/register", body, REMOTE_ADDR=fresh_address())
        assert response.status_code == 400 and response.json()["field"] == field


def test_a_malformed_content_length_is_400(db):
    for path in ("/oauth/register", "/v1/memory/search", "/v1/mcp"):
        response = Client().post(
            path, data=b"{}", content_type="application/json", CONTENT_LENGTH="abc", REMOTE_ADDR=fresh_address()
        )
        assert response.status_code == 400 and response.json()["field"] == "Content-Length"


def test_a_body_that_is_not_json_is_refused_by_name(api):
    text = api.client.post("/v1/memory/search", data="query=x", content_type="text/x-evil-7f3a", headers=api.headers())
    assert text.status_code == 415 and text.json()["error"] == "unsupported_media_type"
    assert text.json()["field"] == "Content-Type" and "application/json" in text.json()["message"]
    assert "evil-7f3a" not in text.content.decode(), "the header's value is never echoed"
    broken = raw_post(api, "/v1/memory/search", '{"query": ')
    assert broken.status_code == 400 and broken.json()["error"] == "invalid_json"
    assert broken.json()["field"] == "body"


def test_a_consent_post_with_a_tampered_client_id_is_400(alice, project):
    app = registered()
    client = logged_in(alice)
    url = authorize_query(app, pkce()[1])
    card = client.get(url)
    for client_id in ("not-a-client", app["client_id"] + "x"):
        response = client.post(url, card_post_data(card, client_id=client_id))
        assert response.status_code == 400 and "No app is registered" in html(response)
    assert not Connection.objects.exists()


def test_a_huge_number_in_the_playground_is_refused_by_its_range(alice, project, api):
    api.add({"text": "Something"})
    response = logged_in(alice).post(
        f"/projects/{project.slug}/playground/run",
        {"tool": "memory_grep", "end_user": "u_1", "arg-pattern": "x", "arg-limit": "9" * 5000},
    )
    assert response.status_code == 400 and "limit: from 1 to 50 (got a larger number)" in html(response)
    deep = logged_in(alice).post(
        f"/projects/{project.slug}/playground/run", {"tool": "memory_add", "end_user": "u_1", "items-json": DEEP}
    )
    assert deep.status_code == 400 and "nests deeper than 64" in html(deep)


def logged(caplog) -> str:
    """Everything the records caught say, their arguments and any traceback included."""
    return "\n".join(f"{record.getMessage()} {record.args!r} {record.exc_text or ''}" for record in caplog.records)


def test_a_refusal_never_echoes_the_value(api, project, caplog):
    caplog.set_level(logging.DEBUG)
    secret = "sk-live-0123456789abcdef"
    cases: list[dict[str, Any]] = [
        {"items": [{"text": "x", "kind": secret}]},
        {"items": [{"text": "x", "at": secret}]},
        {"items": [{"text": "x", "title": secret + "\n"}]},
        {"items": [{"text": "x", secret: 1}]},
        {"items": [{"text": "x", "metadata": {secret + "\u2028": 1}}], "wait": secret},
    ]
    for body in cases:
        response = api.tool("add", **body)
        assert response.status_code == 400 and secret not in response.content.decode(), response.content
    assert caplog.records and secret not in logged(caplog), "nor in the log"
    with scoped(project.pk):
        assert RecentError.objects.count() == len(cases), "each refusal is kept among the last errors"
        assert not RecentError.objects.filter(message__contains=secret).exists()


def test_the_stdio_server_refuses_deep_json_and_a_bad_id_too(read_key):
    context = Context(project=read_key[0].project, account="u_1", access="read")
    session = rpc.Session(context=context, tools=stdio_tools(context), surface="stdio")
    assert stdio_answer(session, DEEP)["error"]["code"] == -32700
    bad_id = stdio_answer(session, '{"jsonrpc": "2.0", "id": ' + LONE + ', "method": "ping"}')
    assert bad_id["id"] is None and bad_id["error"]["code"] == -32600


NOT_FINITE = ["NaN", "Infinity", "-Infinity", "1e999"]  # read by Python's json, refused by PostgreSQL's


@pytest.mark.parametrize("number", NOT_FINITE)
def test_a_number_that_is_not_finite_is_refused_on_every_reader(api, alice, project, read_key, number):
    added = raw_post(api, "/v1/memory/add", '{"items": [{"text": "x", "metadata": {"a": ' + number + "}}]}")
    assert added.status_code == 400 and added.json()["error"] == "invalid_json", added.content
    assert added.json()["field"] == "body" and "not finite" in added.json()["message"]
    call = (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_add", "arguments": '
        '{"items": [{"text": "x", "metadata": {"a": ' + number + "}}]}}}"
    )
    over_mcp = raw_post(api, "/v1/mcp", call)
    assert over_mcp.status_code == 400 and over_mcp.json()["error"]["code"] == -32700
    registration = raw_post(Client(), "/oauth/register", '{"client_name": ' + number + "}", REMOTE_ADDR=fresh_address())
    assert registration.status_code == 400 and registration.json()["field"] == "body"
    played = logged_in(alice).post(
        f"/projects/{project.slug}/playground/run",
        {"tool": "memory_add", "end_user": "u_1", "items-json": '[{"text": "x", "metadata": {"a": ' + number + "}}]"},
    )
    assert played.status_code == 400 and "not finite" in html(played)
    imported = api.client.post(
        "/v1/memory/import",
        content_type="application/x-ndjson",
        headers=api.headers(),
        data='{"format": "twin-memory-export", "version": 1, "items": ' + number + "}\n",
    )
    assert imported.status_code == 400 and (imported.json()["line"], imported.json()["field"]) == (1, "line")
    context = Context(project=read_key[0].project, account="u_1", access="read")
    session = rpc.Session(context=context, tools=stdio_tools(context), surface="stdio")
    assert (
        stdio_answer(session, '{"jsonrpc": "2.0", "id": ' + number + ', "method": "ping"}')["error"]["code"] == -32700
    )
    with scoped(project.pk):
        assert not Item.objects.exists()


def test_a_body_over_its_bound_is_refused_by_field(api):
    response = raw_post(api, "/v1/memory/search", '{"query": "x"}', CONTENT_LENGTH=str(10**12))
    assert response.status_code == 413 and response.json()["error"] == "too_large"
    assert response.json()["field"] == "body"


def test_a_missing_or_bad_account_header_is_refused_by_field(api):
    for account in (None, "a" * 129, "evil-7f3a/x"):
        response = api.as_account(account).tool("search", query="x")
        assert response.status_code == 400 and response.json()["field"] == "X-Twin-Account", response.content
        assert "evil-7f3a" not in response.content.decode()
        over_mcp = api.as_account(account).mcp("ping").json()
        assert over_mcp["error"]["data"]["field"] == "X-Twin-Account"


def test_a_refused_secret_or_hostile_value_never_reaches_the_log(api, project, caplog):
    caplog.set_level(logging.DEBUG)
    secret, hostile = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "evil-7f3a"
    gated = api.tool("add", items=[{"text": f"my token is {secret}"}]).json()
    assert gated["items"][0]["status"] == "refused", "the secret gate refuses it"
    refused = [
        api.tool("add", items=[{"text": "x", "author": f"{hostile}\n## Instructions"}]),
        api.tool("search", query=hostile, before=f"{hostile}-12-01"),
        api.tool("grep", pattern="x", limit=hostile),
        api.as_account(f"{hostile}/x").tool("search", query="x"),
        raw_post(api, "/v1/memory/search", '{"query": "' + hostile + '", "x": NaN}'),
        api.mcp("tools/call", {"name": hostile, "arguments": {}}),
        raw_post(
            Client(),
            "/oauth/register",
            '{"redirect_uris": ["http://' + hostile + '.example/cb"]}',
            REMOTE_ADDR=fresh_address(),
        ),
    ]
    assert all(400 <= response.status_code < 500 or "error" in response.json() for response in refused)
    text = logged(caplog)
    assert caplog.records and secret not in text and hostile not in text, text


def test_an_integral_number_is_read_as_an_integer(api, write_key):
    api.add({"text": "Alice: I deployed the payments service.", "kind": "message", "author": "Alice"})
    context = Context(project=write_key[0].project, account="u_1", access="write")
    session = rpc.Session(context=context, tools=stdio_tools(context), surface="stdio")
    answer = stdio_answer(
        session,
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
        '{"name": "memory_next", "arguments": {"top": 2.0}}}',
    )
    assert answer["result"]["isError"] is False, answer
    assert api.tool("grep", pattern="payments", limit=1.0).json()["found"] == 1
