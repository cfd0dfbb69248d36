"""A NUL character or a URL Python cannot parse, anywhere a route reads one (path, query string, form field,
header), is refused with a 400 naming the field, in the shape of the surface it was sent to, and never
quoting the value: each input below once answered 500 (some with no credentials)."""

import json
from urllib.parse import urlencode

import pytest
from django.test import Client

from accounts.models import OAuthApplication
from tests.console import html, logged_in
from tests.oauth_flow import REDIRECT_URI, authorize_query, pkce, register, registered, token

MCP_LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})


def test_an_unreadable_origin_is_a_json_rpc_error_at_v1_mcp(api):
    response = api.client.post(
        "/v1/mcp", data=MCP_LIST, content_type="application/json", headers=api.headers(Origin="http://[")
    )
    assert response.status_code == 400
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None and body["error"]["code"] == -32600
    assert body["error"]["data"]["field"] == "Origin" and "http://[" not in response.text


def test_a_nul_in_an_mcp_header_is_a_json_rpc_error_even_without_credentials(db):
    response = Client().post(
        "/v1/mcp", data=MCP_LIST, content_type="application/json", headers={"Authorization": "Bearer a\x00b"}
    )
    assert response.status_code == 400 and response.json()["error"]["data"]["field"] == "Authorization"


def test_a_nul_on_a_memory_route_is_the_apis_json_error(api):
    response = api.post("/v1/memory/search", {"query": "x"}, **{"X-Twin-Account": "u\x001"})
    assert response.status_code == 400
    body = response.json()
    assert (body["error"], body["field"]) == ("bad_request", "X-Twin-Account")
    assert body["message"] == "The X-Twin-Account header holds a NUL (\\u0000) character."
    assert api.get("/v1/me?format=a%00b").json()["field"] == "format"
    # The import streams its body to disk: a body sent there is never parsed as form fields by the check (the
    # import answers it its own way), so a 2 GiB upload is never read into memory.
    upload = api.client.post(
        "/v1/memory/import", data="a=%00", content_type="application/x-www-form-urlencoded", headers=api.headers()
    )
    assert "form field" not in upload.content.decode()


@pytest.mark.parametrize(
    "path, data, field",
    [
        ("/oauth/token", "grant_type=authorization_code&client_id=a%00b&code=x", "client_id"),
        ("/oauth/token", "grant_type=authorization_code&client_id=abc&code=x%00y", "code"),
        ("/oauth/revoke", "client_id=a%00&token=x", "client_id"),
    ],
)
def test_a_nul_at_the_token_endpoints_is_invalid_request(db, path, data, field):
    response = Client().post(path, data=data, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400 and response["Cache-Control"] == "no-store"
    assert response.json()["error"] == "invalid_request" and response.json()["field"] == field
    assert "\x00" not in response.json()["error_description"]


@pytest.mark.parametrize(
    "metadata, field",
    [
        ({"client_name": "a\x00b"}, "client_name"),
        ({"redirect_uris": ["https://app.example/c\x00b"]}, "redirect_uris[0]"),
        ({"redirect_uris": ["https://[::1/cb"]}, "redirect_uris[0]"),
    ],
)
def test_registration_refuses_a_nul_or_an_unreadable_uri_by_field(db, metadata, field):
    response = register(**metadata)
    assert response.status_code == 400 and response.json()["field"] == field
    assert not OAuthApplication.objects.exists()


def test_an_unreadable_resource_or_a_nul_client_id_is_refused_at_authorize_and_token(alice, project):
    app, browser = registered(), logged_in(alice)
    for url, field in (
        (authorize_query(app, pkce()[1], resource="http://[::1"), "resource"),
        (authorize_query(app, pkce()[1], client_id="a\x00b"), "client_id"),
    ):
        response = browser.get(url)
        assert response.status_code == 400 and response.json()["error"] == "invalid_request", url
        assert response.json()["field"] == field
    exchanged = token(
        {"grant_type": "authorization_code", "client_id": app["client_id"], "code": "x", "resource": "http://[::1"}
        | {"redirect_uri": REDIRECT_URI, "code_verifier": "v" * 50}
    )
    assert exchanged.status_code == 400 and exchanged.json()["field"] == "resource"


@pytest.mark.parametrize(
    "tail, field",
    [
        ("end-users/a%00b", "url"),
        ("end-users/u_1?path=a%00b", "path"),
        ("end-users/u_1?tab=threads&thread=a%00b", "thread"),
        ("end-users/u_1/forget?item=a%00b", "item"),
        ("playground?end_user=a%00b", "end_user"),
    ],
)
def test_a_nul_in_a_console_address_is_a_400_page(alice, project, tail, field):
    response = logged_in(alice).get(f"/projects/{project.slug}/{tail}")
    assert response.status_code == 400 and response["Content-Type"].startswith("text/html")
    page = html(response)
    assert "This request cannot be read" in page and "NUL" in page and "\x00" not in page
    assert (f"The query parameter {field} " in page) or field == "url"


def test_a_form_field_is_refused_by_its_name_and_a_key_that_is_no_name_is_not_quoted(alice, project):
    browser = logged_in(alice)
    form = urlencode({"username": "a\x00@example.com", "password": "x"})  # as a browser sends a form
    named = browser.post("/login", data=form, content_type="application/x-www-form-urlencoded")
    assert named.status_code == 400 and "The form field username holds a NUL" in html(named)
    unnamed = browser.get("/projects?%3Cb%3E%00=1")
    assert unnamed.status_code == 400 and "A query parameter holds a NUL" in html(unnamed)
    assert "&lt;b&gt;" not in html(unnamed) and "<b>" not in html(unnamed)
