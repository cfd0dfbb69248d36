"""Generated bad input beyond the OpenAPI routes (tests/security/test_generated_input.py holds those): the OAuth
endpoints (token, revoke, register, and authorize signed in), the headers /v1/mcp reads (Origin,
MCP-Protocol-Version, Mcp-Method, Mcp-Name, Authorization), and the console's query strings. Values are
drawn from every character but a lone surrogate (none can travel in a URL or a form), NUL and unreadable URLs
among them. Every answer: never a 5xx (a view that raises fails the test at once); an OAuth refusal is JSON
with an `error`; /v1/mcp answers JSON-RPC or nothing (202). A handful of examples each, so the whole file
runs in seconds."""

import json
from urllib.parse import urlencode

from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.console import logged_in
from tests.oauth_flow import REDIRECT_URI, fresh_address, pkce, registered

SETTINGS = settings(
    max_examples=15, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)
EDGES = ["\x00", "a\x00b", "http://[", "http://[::1", "https://[x]/", "http://a:99999/", "%00", "\u202e", " ", ""]
TEXT = st.sampled_from(EDGES) | st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
# A header's value travels as latin-1 (PEP 3333): what any client can send in one.
HEADER = st.sampled_from(EDGES[:8]) | st.text(st.characters(max_codepoint=255), max_size=16)
# Never a URL for a client_id: one that is would be fetched as a Client ID Metadata Document.
CLIENT_ID = TEXT.filter(lambda value: "://" not in value)
MCP_LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})


def oauth_answered(response) -> None:
    """A 4xx from an OAuth endpoint is JSON naming its error (RFC 6749 §5.2); nothing is a 5xx."""
    assert response.status_code < 500, response.content[:300]
    if 400 <= response.status_code < 500 and response["Content-Type"].startswith("application/json"):
        assert response.json().get("error"), response.content[:300]


def form(path: str, fields: dict):
    data = urlencode({name: value for name, value in fields.items() if value is not None})
    return Client().post(path, data=data, content_type="application/x-www-form-urlencoded", REMOTE_ADDR=fresh_address())


def test_generated_token_and_revoke_forms_are_answered(db):
    app = registered()
    client_id = st.just(app["client_id"]) | CLIENT_ID
    token = st.fixed_dictionaries(
        {"grant_type": st.sampled_from(["authorization_code", "refresh_token"]) | TEXT, "client_id": client_id},
        optional={
            "code": TEXT,
            "redirect_uri": st.just(REDIRECT_URI) | TEXT,
            "code_verifier": TEXT,
            "resource": st.just("http://testserver/v1/mcp") | TEXT,
            "refresh_token": TEXT,
        },
    )
    revoke = st.fixed_dictionaries({"token": TEXT, "client_id": client_id}, optional={"token_type_hint": TEXT})

    @SETTINGS
    @given(request=st.tuples(st.just("/oauth/token"), token) | st.tuples(st.just("/oauth/revoke"), revoke))
    def run(request):
        oauth_answered(form(*request))

    run()


def test_generated_registrations_are_answered(db):
    uris = st.lists(st.just(REDIRECT_URI) | TEXT | st.integers(), max_size=3)
    metadata = st.fixed_dictionaries(
        {"redirect_uris": uris},
        optional={
            "client_name": TEXT | st.integers(),
            "grant_types": st.lists(TEXT, max_size=2),
            "response_types": st.lists(TEXT, max_size=2),
            "token_endpoint_auth_method": st.sampled_from(["none", "client_secret_basic"]) | TEXT,
            "scope": TEXT,
        },
    )

    @SETTINGS
    @given(metadata=metadata)
    def run(metadata):
        response = Client().post(
            "/oauth/register", data=json.dumps(metadata), content_type="application/json", REMOTE_ADDR=fresh_address()
        )
        oauth_answered(response)
        if response.status_code == 400:
            assert response.json().get("field"), response.content

    run()


def test_generated_authorization_requests_of_a_signed_in_person_are_answered(alice, project):
    app, browser = registered(), logged_in(alice)
    query = st.fixed_dictionaries(
        {"client_id": st.just(app["client_id"]) | CLIENT_ID},
        optional={
            "response_type": st.just("code") | TEXT,
            "redirect_uri": st.just(REDIRECT_URI) | TEXT,
            "scope": st.sampled_from(["memory:read", "memory:read memory:write"]) | TEXT,
            "state": TEXT,
            "code_challenge": st.just(pkce()[1]) | TEXT,
            "code_challenge_method": st.just("S256") | TEXT,
            "resource": st.just("http://testserver/v1/mcp") | TEXT,
        },
    )

    @SETTINGS
    @given(query=query)
    def run(query):
        response = browser.get("/oauth/authorize?" + urlencode(query))
        assert response.status_code < 500, response.content[:300]

    run()


def test_generated_mcp_headers_are_answered(api):
    headers = st.fixed_dictionaries(
        {
            "Origin": HEADER | st.just("http://testserver"),
            "Authorization": st.just(api.headers()["Authorization"]) | HEADER.map(lambda value: f"Bearer {value}"),
        },
        optional={
            "MCP-Protocol-Version": st.sampled_from(["2026-07-28", "2025-11-25"]) | HEADER,
            "Mcp-Method": st.just("tools/list") | HEADER,
            "Mcp-Name": HEADER,
            "X-Twin-Account": st.just("u_1") | HEADER,
        },
    )

    @SETTINGS
    @given(headers=headers)
    def run(headers):
        response = api.client.post("/v1/mcp", data=MCP_LIST, content_type="application/json", headers=headers)
        assert response.status_code < 500, response.content[:300]
        assert response.status_code == 202 or response.json()["jsonrpc"] == "2.0", response.content[:300]

    run()


def test_generated_console_query_strings_are_answered(alice, project, api):
    api.add({"text": "I moved to Porto in 2023.", "id": "home"}, wait=False)
    base = f"/projects/{project.slug}"
    read = {  # each page, and the query parameters it reads
        f"{base}/end-users/u_1": ["tab", "path", "thread", "subject"],
        f"{base}/end-users/u_1/forget": ["item"],
        f"{base}/end-users": ["q"],
        f"{base}/playground": ["tool", "end_user", "arg-query", "arg-id"],
        f"{base}/usage": ["days"],
        "/signup": ["email"],
        "/login": ["next"],
    }
    requests = st.sampled_from(sorted(read)).flatmap(
        lambda page: st.tuples(
            st.just(page), st.dictionaries(st.sampled_from(read[page]) | TEXT, TEXT, min_size=1, max_size=3)
        )
    )
    browser = logged_in(alice)

    @SETTINGS
    @given(request=requests)
    def run(request):
        page, query = request
        response = browser.get(f"{page}?{urlencode(query)}")
        assert response.status_code < 500, (page, query, response.content[:300])

    run()
