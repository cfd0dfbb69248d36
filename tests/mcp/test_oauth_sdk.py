"""End to end: the official MCP Python SDK's OAuth client signs in to a live server, as claude.ai would.

tests/sdk/oauth_client.py runs in its own process, an async client beside the server. The SDK meets the 401,
discovers the metadata, registers, sends a headless person through log-in and the consent card, exchanges the
code, lists the tools its access allows, calls one, and refreshes. The server is pytest-django's live_server
on the real database and Redis; Celery runs eagerly, so memory_add's background read happens in the server
thread.
"""

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from accounts.models import Connection, OAuthAccessToken, OAuthApplication, OAuthRefreshToken

SCRIPT = Path(__file__).resolve().parents[1] / "sdk" / "oauth_client.py"
READ_TOOLS = [
    "memory_search",
    "memory_grep",
    "memory_read",
    "memory_ls",
    "memory_around",
    "memory_history",
    "memory_latest",
    "memory_overview",
]
PHRASE = "Sapphire Heron"
TIMEOUT_SECONDS = 90


@pytest.fixture
def sign_in(live_server):
    """Run the SDK's OAuth client against the live server; returns the one JSON line it printed."""

    def run(email: str, password: str, *options: str) -> dict:
        done = subprocess.run(
            [sys.executable, str(SCRIPT), f"{live_server.url}/v1/mcp", email, password, *options],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
        )
        lines = done.stdout.strip().splitlines()
        assert lines, f"the SDK client printed nothing (exit {done.returncode}):\n{done.stderr[-3000:]}"
        seen = json.loads(lines[-1])
        assert seen["ok"], f"{seen['error']}\n{seen.get('traceback', '')[-3000:]}\n{done.stderr[-2000:]}"
        seen["server"] = live_server.url
        return seen

    return run


def oauth_steps(seen) -> list[tuple]:
    """The requests the SDK made, in order, as (method, path, status), the token requests with their grant."""
    return [(e["http"], e["path"], e.get("grant_type") or e.get("method"), e["status"]) for e in seen["exchanges"]]


def test_the_sdk_signs_in_with_read_and_save_and_refreshes(sign_in, alice, project):
    seen = sign_in("alice@example.com", "alice-password-1", "--access", "write", "--phrase", PHRASE)
    server = seen["server"]
    steps = oauth_steps(seen)

    # Discovery from the 401, registration, the code exchange, then the retried initialize.
    first_401 = seen["exchanges"][0]
    assert (first_401["path"], first_401["status"]) == ("/v1/mcp", 401)
    assert first_401["www_authenticate"] == (
        f'Bearer resource_metadata="{server}/.well-known/oauth-protected-resource/v1/mcp"'
    )
    assert steps[:6] == [
        ("POST", "/v1/mcp", "initialize", 401),
        ("GET", "/.well-known/oauth-protected-resource/v1/mcp", None, 200),
        ("GET", "/.well-known/oauth-authorization-server", None, 200),
        ("POST", "/oauth/register", None, 201),
        ("POST", "/oauth/token", "authorization_code", 200),
        ("POST", "/v1/mcp", "initialize", 200),
    ]
    # The authorization request the SDK built: PKCE S256, the resource, the scopes from the metadata.
    [authorization_url] = seen["authorization_urls"]
    asked = {k: v[0] for k, v in parse_qs(urlsplit(authorization_url).query).items()}
    assert urlsplit(authorization_url).path == "/oauth/authorize"
    assert asked["code_challenge_method"] == "S256" and asked["resource"] == f"{server}/v1/mcp"
    assert asked["scope"] == "memory:read memory:write"
    [redirect] = seen["redirects"]
    answered = parse_qs(urlsplit(redirect).query)
    assert answered["iss"] == [server] and answered["state"] == [asked["state"]]

    # What the person saw on the card.
    card = seen["card"]
    assert card["title"] == "SDK test client wants to use your twin memory"
    assert card["accesses"] == ["write", "read"]
    assert (card["project"], card["end_user"]) == (project.slug, "alice@example.com")
    assert card["x_frame_options"] == "DENY" and "frame-ancestors 'none'" in card["csp"]

    # The tools Read and save allows, a call, and the memory it reached.
    assert seen["client"]["token_endpoint_auth_method"] == "none" and "client_secret" not in seen["client"]
    assert seen["first_tokens"]["scope"] == "memory:read memory:write"
    assert seen["first_tokens"]["expires_in"] == 900
    assert seen["tools"] == [*READ_TOOLS, "memory_add"]
    assert json.loads(seen["add"]["text"])["searchable"] is True
    grep = json.loads(seen["grep"]["text"])
    assert grep["found"] == 1 and PHRASE in grep["hits"][0]["text"]

    # The refresh: a new pair, the old refresh token rotated out, and the calls go on.
    refreshes = [e for e in seen["exchanges"] if e.get("grant_type") == "refresh_token"]
    assert [(e["status"], e["resource"]) for e in refreshes] == [(200, f"{server}/v1/mcp")]
    first, fresh = seen["first_tokens"], seen["refreshed_tokens"]
    assert fresh["refresh_token"] != first["refresh_token"] and fresh["access_token"] != first["access_token"]
    assert seen["tools_after_refresh"] == [*READ_TOOLS, "memory_add"]
    assert json.loads(seen["grep_after_refresh"]["text"])["found"] == 1

    connection = Connection.objects.get()
    assert (connection.user, connection.project, connection.end_user.external_id, connection.access) == (
        alice,
        project,
        "alice@example.com",
        "write",
    )
    assert connection.revoked_at is None and connection.last_used_at is not None
    app = OAuthApplication.objects.get()
    assert (app.name, app.client_type, app.registration_source) == ("SDK test client", "public", "dcr")
    assert OAuthRefreshToken.objects.filter(connection=connection, revoked__isnull=False).count() == 1
    assert OAuthRefreshToken.objects.filter(connection=connection, revoked__isnull=True).count() == 1
    assert list(OAuthAccessToken.objects.values_list("resource", flat=True)) == [[f"{server}/v1/mcp"]]


@pytest.mark.parametrize("method", ["client_secret_post", "client_secret_basic"])
def test_a_confidential_sdk_client_signs_in_read_only(sign_in, alice, project, write_key, method):
    from tests.conftest import Api

    Api(write_key[1], "alice@example.com").add({"text": f"The {PHRASE} tram runs on Sundays.", "id": "pre-1"})
    seen = sign_in(
        "alice@example.com", "alice-password-1", "--access", "read", "--auth-method", method, "--phrase", PHRASE
    )

    assert seen["client"]["token_endpoint_auth_method"] == method and seen["client"]["client_secret"]
    tokens = [e for e in seen["exchanges"] if e["path"] == "/oauth/token"]
    assert [e["grant_type"] for e in tokens] == ["authorization_code", "refresh_token"]
    assert all(e["basic_auth"] == (method == "client_secret_basic") for e in tokens)
    assert all(e["secret_in_body"] == (method == "client_secret_post") for e in tokens)
    assert seen["first_tokens"]["scope"] == "memory:read"
    assert seen["tools"] == READ_TOOLS == seen["tools_after_refresh"]
    assert json.loads(seen["grep"]["text"])["found"] == 1
    assert json.loads(seen["grep_after_refresh"]["text"])["found"] == 1
    assert Connection.objects.get().access == "read"
