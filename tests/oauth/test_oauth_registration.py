"""POST /oauth/register: dynamic client registration (RFC 7591) for public and confidential clients."""

import json
import types

import pytest
from django.contrib.auth.hashers import check_password
from django.test import Client

from accounts.models import OAuthApplication
from accounts.registration import REDIRECT_URIS_MAX, REGISTRATION_BODY_MAX
from tests.oauth_flow import REDIRECT_URI, fresh_address, register


def test_it_registers_a_public_client(db):
    response = register(
        client_name="Claude",
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    assert response.status_code == 201
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    assert "client_secret" not in body
    assert body["token_endpoint_auth_method"] == "none"
    assert body["redirect_uris"] == [REDIRECT_URI]
    assert body["grant_types"] == ["authorization_code", "refresh_token"]
    assert body["response_types"] == ["code"]
    assert body["client_name"] == "Claude"
    assert body["scope"] == "memory:read memory:write"
    assert isinstance(body["client_id_issued_at"], int)
    app = OAuthApplication.objects.get(client_id=body["client_id"])
    assert app.client_type == OAuthApplication.CLIENT_PUBLIC
    assert app.authorization_grant_type == OAuthApplication.GRANT_AUTHORIZATION_CODE
    assert app.registration_source == OAuthApplication.RegistrationSource.DCR
    assert app.skip_authorization is False


@pytest.mark.parametrize("method", ["client_secret_post", "client_secret_basic"])
def test_it_registers_a_confidential_client_with_a_secret_shown_once(db, method):
    body = register(token_endpoint_auth_method=method).json()
    assert body["token_endpoint_auth_method"] == method
    assert body["client_secret_expires_at"] == 0
    app = OAuthApplication.objects.get(client_id=body["client_id"])
    assert app.client_type == OAuthApplication.CLIENT_CONFIDENTIAL
    assert app.client_secret != body["client_secret"], "stored hashed"
    assert check_password(body["client_secret"], app.client_secret)


def test_a_client_naming_no_method_is_confidential_with_basic(db):
    body = register(token_endpoint_auth_method=None).json()
    assert body["token_endpoint_auth_method"] == "client_secret_basic" and body["client_secret"]


@pytest.mark.parametrize(
    "uri",
    [
        "https://claude.ai/api/mcp/auth_callback",
        "https://chatgpt.com/connector_platform_oauth_redirect",
        "http://127.0.0.1:33418/callback",
        "http://[::1]:8080/cb",
        "http://localhost:3030/callback",
    ],
)
def test_it_accepts_https_and_loopback_http_redirect_uris(db, uri):
    response = register(redirect_uris=[uri])
    assert response.status_code == 201, response.content
    assert response.json()["redirect_uris"] == [uri]


@pytest.mark.parametrize(
    "uris",
    [
        ["http://app.example/callback"],
        ["http://192.168.1.5/cb"],
        ["cursor://anysphere/callback"],
        ["https://app.example/cb#frag"],
        ["https://user:pw@app.example/cb"],
        ["javascript:alert(1)"],
        ["/relative"],
        [],
        ["https://app.example/" + "x" * 2000],
        [REDIRECT_URI, "http://app.example/cb"],
        [""],
        [42],
    ],
)
def test_it_refuses_other_redirect_uris(db, uris):
    response = register(redirect_uris=uris)
    assert response.status_code == 400
    assert response.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata")
    assert OAuthApplication.objects.count() == 0


@pytest.mark.parametrize(
    "uri",
    [
        "https://127.0.0.1/cb http://127.0.0.2:9/cb",  # stored space-joined, it would be two: the second unchecked
        "https://app.example/cb\thttp://127.0.0.2:9/cb",
        "https://app.example/cb\u00a0x",
        "https://app.example/cb\u2003x",
        "https://app.example/cb\u202ex",
    ],
)
def test_a_redirect_uri_holding_whitespace_is_refused(db, uri):
    response = register(redirect_uris=[uri])
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_redirect_uri",
        "error_description": "redirect_uris[0] must be one URI: no whitespace, control character or "
        "bidirectional control.",
        "field": "redirect_uris[0]",
    }
    assert OAuthApplication.objects.count() == 0


@pytest.mark.parametrize("name", ["Claude\u202egnp.exe", "Cla\u2066ude\u2069", "Claude\nAdmin", "Claude\x00"])
def test_a_client_name_that_is_not_one_line_is_refused(db, name):
    """The name is shown on one line (the card, Connected apps): a bidirectional control could show another."""
    response = register(client_name=name)
    assert response.status_code == 400 and response.json()["field"] == "client_name"
    assert response.json()["error"] == "invalid_client_metadata"
    assert OAuthApplication.objects.count() == 0


def test_it_needs_redirect_uris(db):
    response = register(redirect_uris=None)
    assert response.status_code == 400 and response.json()["error"] == "invalid_redirect_uri"


def test_it_bounds_the_number_of_redirect_uris(db):
    uris = [f"https://app.example/cb{i}" for i in range(REDIRECT_URIS_MAX + 1)]
    response = register(redirect_uris=uris)
    assert response.status_code == 400 and str(REDIRECT_URIS_MAX) in response.json()["error_description"]
    assert register(redirect_uris=uris[:-1]).status_code == 201


@pytest.mark.parametrize(
    "metadata",
    [
        {"grant_types": ["client_credentials"]},
        {"grant_types": ["authorization_code", "implicit"]},
        {"grant_types": ["refresh_token"]},
        {"grant_types": "authorization_code"},
        {"response_types": ["token"]},
        {"token_endpoint_auth_method": "private_key_jwt"},
        {"client_name": "x" * 201},
        {"client_name": 7},
    ],
)
def test_it_refuses_what_it_does_not_serve(db, metadata):
    response = register(**metadata)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"
    assert response.json()["error_description"]


def test_it_ignores_metadata_it_does_not_use_and_narrows_the_scope(db):
    response = register(
        application_type="native",
        client_uri="https://app.example",
        logo_uri="https://app.example/l.png",
        software_id="x",
        scope="openid memory:read",
    )
    assert response.status_code == 201 and response.json()["scope"] == "memory:read"


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]", b'"a string"'])
def test_it_needs_a_json_object(db, body):
    response = Client().post("/oauth/register", data=body, content_type="application/json", REMOTE_ADDR=fresh_address())
    assert response.status_code == 400 and response.json()["error"] == "invalid_client_metadata"


def test_it_is_bounded_in_size(db):
    body = {"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none", "client_name": "C"}
    padding = REGISTRATION_BODY_MAX - len(json.dumps({**body, "pad": ""}))
    ok = Client().post(
        "/oauth/register",
        data=json.dumps({**body, "pad": "x" * padding}),
        content_type="application/json",
        REMOTE_ADDR=fresh_address(),
    )
    assert ok.status_code == 201
    too_big = Client().post(
        "/oauth/register",
        data=json.dumps({**body, "pad": "x" * (padding + 1)}),
        content_type="application/json",
        REMOTE_ADDR=fresh_address(),
    )
    assert too_big.status_code == 413
    assert str(REGISTRATION_BODY_MAX) in too_big.json()["error_description"]


def test_it_is_rate_limited_by_client_address(db, settings):
    settings.OAUTH_REGISTRATIONS_PER_MINUTE = 3
    address = fresh_address()
    assert [register(address=address).status_code for _ in range(3)] == [201, 201, 201]
    refused = register(address=address)
    assert refused.status_code == 429
    assert refused.json()["error"] == "too_many_requests"
    assert 1 <= int(refused["Retry-After"]) <= 2 * 60, "a burst takes up to two windows to slide out"
    assert register(address=fresh_address()).status_code == 201, "another address has its own allowance"
    assert OAuthApplication.objects.count() == 4


def test_a_burst_across_a_minute_boundary_is_still_one_burst(db, settings, monkeypatch):
    """A fixed per-minute window would allow twice the limit to a burst that straddles its boundary."""
    settings.OAUTH_REGISTRATIONS_PER_MINUTE = 3
    address, clock = fresh_address(), [60 * 29_000_000 + 59.5]  # half a second before a minute starts
    monkeypatch.setattr("accounts.throttle.time", types.SimpleNamespace(time=lambda: clock[0]))
    assert [register(address=address).status_code for _ in range(3)] == [201, 201, 201]
    clock[0] += 1
    assert register(address=address).status_code == 429
    clock[0] += 30
    assert register(address=address).status_code == 201, "half the last minute's burst has slid out"
    assert register(address=address).status_code == 429, "and only that half"
    clock[0] += 90
    assert [register(address=address).status_code for _ in range(3)] == [201, 201, 201], "after a quiet minute"


def test_it_answers_only_post(db):
    assert Client().get("/oauth/register").status_code == 405


MARK = "evil-7f3a"  # in every refused value, so an echo is found wherever it lands


@pytest.mark.parametrize(
    "metadata, field",
    [
        ({"redirect_uris": [REDIRECT_URI, f"http://{MARK}.example/cb"]}, "redirect_uris[1]"),
        ({"redirect_uris": [f"https://{MARK}.example:99999/cb"]}, "redirect_uris[0]"),
        ({"redirect_uris": [f"https://{MARK}.example/cb#frag"]}, "redirect_uris[0]"),
        ({"redirect_uris": [f"https://{MARK} example/cb"]}, "redirect_uris[0]"),
        ({"redirect_uris": None}, "redirect_uris"),
        ({"redirect_uris": [7]}, "redirect_uris"),
        ({"grant_types": [MARK]}, "grant_types"),
        ({"response_types": [MARK]}, "response_types"),
        ({"token_endpoint_auth_method": MARK}, "token_endpoint_auth_method"),
        ({"client_name": MARK * 30}, "client_name"),
    ],
)
def test_a_refusal_names_its_field_and_never_echoes_the_value(db, metadata, field):
    response = register(**metadata)
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert MARK not in response.content.decode()
    assert OAuthApplication.objects.count() == 0
