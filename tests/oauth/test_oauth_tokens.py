"""/oauth/token and /oauth/revoke, and what a token reaches: the code exchange (PKCE, code reuse and expiry),
the audience, refresh rotation and reuse detection, the access a token carries on /v1/mcp and /v1/memory/*."""

import base64
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts.connections import connection_revoke
from accounts.models import Connection, Membership, OAuthAccessToken, OAuthGrant, OAuthRefreshToken, Role
from accounts.tasks import clear_expired_tokens
from tests.conftest import Api
from tests.oauth_flow import (
    MCP_URL,
    REDIRECT_URI,
    answer,
    authorize_query,
    connect,
    consent,
    exchange,
    member,
    pkce,
    refresh,
    registered,
    stored,
    token,
)

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
METADATA = "http://testserver/.well-known/oauth-protected-resource/v1/mcp"


def a_code(user, app, *, access="write") -> tuple[str, str]:
    """(code, verifier) for `user` on `app`, after the card."""
    client = Client()
    client.force_login(user)
    verifier, challenge = pkce()
    return answer(consent(client, authorize_query(app, challenge), access=access))["code"], verifier


def bearer(tokens: dict, account="ignored") -> Api:
    return Api(tokens["access_token"], account)


def tools(api: Api) -> list[str]:
    response = api.mcp("tools/list")
    assert response.status_code == 200, response.content
    return [tool["name"] for tool in response.json()["result"]["tools"]]


def test_it_exchanges_a_code_for_tokens(alice, project):
    app = registered()
    code, verifier = a_code(alice, app)
    response = exchange(app, code, verifier)
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 15 * 60
    assert body["scope"] == "memory:read memory:write"
    assert body["refresh_token"] and body["access_token"] != body["refresh_token"]
    access = stored(OAuthAccessToken, body["access_token"])
    refresh_row = stored(OAuthRefreshToken, body["refresh_token"])
    connection = Connection.objects.get()
    assert access.connection == refresh_row.connection == connection
    assert access.resource == refresh_row.resource == [MCP_URL]
    assert access.token == "" and refresh_row.token == "", "only a checksum of each token is stored"
    assert timedelta(minutes=14) < access.expires - timezone.now() <= timedelta(minutes=15)


def test_the_tools_follow_the_access(alice, project):
    assert tools(bearer(connect(alice, access="write"))) == [*READ_TOOLS, "memory_add"]
    assert tools(bearer(connect(alice, access="read"))) == READ_TOOLS


def test_a_read_only_connection_calling_memory_add_is_403_insufficient_scope(alice, project):
    api = bearer(connect(alice, access="read"))
    response = api.mcp("tools/call", {"name": "memory_add", "arguments": {"items": [{"text": "x"}]}})
    assert response.status_code == 403
    assert response["WWW-Authenticate"] == (
        f'Bearer error="insufficient_scope", scope="memory:write", resource_metadata="{METADATA}"'
    )
    assert response.json()["error"]["data"]["error"] == "insufficient_scope"
    http = api.tool("add", items=[{"text": "x"}])
    assert http.status_code == 403 and http.json()["error"] == "insufficient_scope"


def test_a_read_key_gets_the_same_insufficient_scope_challenge(read_api):
    response = read_api.mcp("tools/call", {"name": "memory_add", "arguments": {"items": [{"text": "x"}]}})
    assert response["WWW-Authenticate"] == (
        f'Bearer error="insufficient_scope", scope="memory:write", resource_metadata="{METADATA}"'
    )


def test_the_token_names_the_end_user_and_x_twin_account_is_ignored(alice, project, api):
    oauth = bearer(connect(alice), account="u_1")
    me = oauth.get("/v1/me").json()
    assert me["project"]["slug"] == project.slug
    assert me["end_user"]["id"] == "alice@example.com"
    assert me["access"] == "write" and me["key"] is None and me["connection"]["app"] == "Claude"
    oauth.add({"text": "My tram is the Sapphire Heron line.", "id": "t-1"})
    assert Api(oauth.key, None).tool("grep", pattern="Sapphire Heron").json()["found"] == 1
    assert api.as_account("alice@example.com").tool("grep", pattern="Sapphire Heron").json()["found"] == 1
    assert api.tool("grep", pattern="Sapphire Heron").status_code == 404, "u_1 has no memory: nothing reached it"


def test_the_same_tokens_work_on_the_memory_routes(alice, project):
    oauth = bearer(connect(alice))
    assert oauth.tool("add", items=[{"text": "I moved to Porto in May.", "id": "m-1"}], wait=True).status_code == 200
    assert oauth.tool("grep", pattern="Porto").json()["found"] == 1
    call = oauth.call("memory_grep", pattern="Porto")
    assert call["result"]["isError"] is False


def test_no_reach_across_projects_or_end_users(alice, project, charlie, other_project, charlie_api):
    mine = bearer(connect(alice))
    mine.add({"text": "Alice's secret plan is Operation Bluebird.", "id": "s-1"})
    theirs = bearer(connect(charlie))
    assert theirs.get("/v1/me").json()["project"]["slug"] == other_project.slug
    assert theirs.tool("grep", pattern="Bluebird").status_code == 404
    assert charlie_api.as_account("alice@example.com").tool("grep", pattern="Bluebird").status_code == 404
    # A token only ever reaches its own connection's end user, whatever the headers say.
    assert Api(theirs.key, "alice@example.com").tool("grep", pattern="Bluebird").status_code == 404


def test_a_code_works_once_and_its_reuse_revokes_what_it_issued(alice, project):
    """RFC 6749 §4.1.2: a code presented twice has leaked, so the tokens it was exchanged for end too."""
    app = registered()
    code, verifier = a_code(alice, app)
    tokens = exchange(app, code, verifier).json()
    assert bearer(tokens).mcp("ping").status_code == 200
    again = exchange(app, code, verifier)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert bearer(tokens).mcp("ping").status_code == 401
    assert refresh(app, tokens["refresh_token"]).json()["error"] == "invalid_grant"
    assert Connection.objects.get().revoked_at is not None, "the app shows as disconnected"
    assert exchange(app, code, verifier).json()["error"] == "invalid_grant", "and the code stays refused"


def test_the_daily_cleanup_drops_spent_codes_and_keeps_live_tokens(alice, project, settings):
    app = registered()
    code, verifier = a_code(alice, app)
    tokens = exchange(app, code, verifier).json()
    OAuthGrant.objects.update(expires=timezone.now() - timedelta(minutes=1))
    assert settings.CELERY_BEAT_SCHEDULE["clear-expired-tokens"]["task"] == clear_expired_tokens.name
    clear_expired_tokens.delay()
    assert not OAuthGrant.objects.exists()
    assert bearer(tokens).mcp("ping").status_code == 200
    assert refresh(app, tokens["refresh_token"]).status_code == 200


def test_reusing_a_code_ends_only_its_own_sign_in(alice, project):
    app = registered()
    code, verifier = a_code(alice, app)
    exchange(app, code, verifier)
    other = connect(alice)  # another app, its own connection
    assert exchange(app, code, verifier).status_code == 400
    assert bearer(other).mcp("ping").status_code == 200


def test_an_expired_code_is_refused(alice, project):
    app = registered()
    code, verifier = a_code(alice, app)
    OAuthGrant.objects.filter(code=code).update(expires=timezone.now() - timedelta(seconds=1))
    response = exchange(app, code, verifier)
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"


def test_the_code_verifier_is_required_and_checked(alice, project):
    app = registered()
    code, verifier = a_code(alice, app)
    missing = exchange(app, code, None)
    assert missing.status_code == 400 and missing.json()["error"] == "invalid_request"
    wrong = exchange(app, code, pkce()[0])
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    assert not OAuthAccessToken.objects.exists()


def test_the_redirect_uri_must_match_the_authorization(alice, project):
    app = registered(redirect_uris=[REDIRECT_URI, "https://app.example/other"])
    code, verifier = a_code(alice, app)
    response = exchange(app, code, verifier, redirect_uri="https://app.example/other")
    assert response.status_code == 400 and response.json()["error"] in ("invalid_grant", "invalid_request")
    assert not OAuthAccessToken.objects.exists()


def test_another_clients_code_is_refused(alice, project):
    app, thief = registered(), registered()
    code, verifier = a_code(alice, app)
    response = exchange(thief, code, verifier)
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"


def test_a_token_for_another_audience_is_refused(alice, project):
    app = registered()
    code, verifier = a_code(alice, app)
    response = exchange(app, code, verifier, resource="https://other.example/v1/mcp")
    assert response.status_code == 400 and response.json()["error"] == "invalid_target"
    # A token bound to this server's /v1/mcp is refused by a server answering under another name.
    tokens = exchange(app, code, verifier).json()
    other_host = Client(HTTP_HOST="localhost").post(
        "/v1/mcp",
        data='{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
        content_type="application/json",
        headers={"Authorization": f"Bearer {tokens['access_token']}"},
    )
    assert other_host.status_code == 401
    assert "another resource" in other_host.json()["error"]["message"]
    assert bearer(tokens).mcp("ping").status_code == 200


def test_refresh_rotates_and_keeps_the_connection(alice, project):
    tokens = connect(alice, access="read")
    response = refresh(tokens["app"], tokens["refresh_token"])
    assert response.status_code == 200
    fresh = response.json()
    assert fresh["refresh_token"] != tokens["refresh_token"] and fresh["access_token"] != tokens["access_token"]
    assert fresh["scope"] == "memory:read" and fresh["expires_in"] == 900
    assert stored(OAuthRefreshToken, tokens["refresh_token"]).revoked is not None
    assert stored(OAuthRefreshToken, fresh["refresh_token"]).connection == Connection.objects.get()
    assert tools(bearer(fresh)) == READ_TOOLS
    assert bearer(tokens).mcp("ping").status_code == 401, "the rotated pair's access token is gone"


def test_reusing_a_rotated_refresh_token_revokes_the_whole_connection(alice, project):
    tokens = connect(alice)
    fresh = refresh(tokens["app"], tokens["refresh_token"]).json()
    replay = refresh(tokens["app"], tokens["refresh_token"])
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert Connection.objects.get().revoked_at is not None
    assert bearer(fresh).mcp("ping").status_code == 401
    assert refresh(tokens["app"], fresh["refresh_token"]).json()["error"] == "invalid_grant"


def test_a_refresh_token_lasts_thirty_days(alice, project):
    tokens = connect(alice)
    row = stored(OAuthRefreshToken, tokens["refresh_token"])
    OAuthRefreshToken.objects.filter(pk=row.pk).update(created=timezone.now() - timedelta(days=29, hours=23))
    fresh = refresh(tokens["app"], tokens["refresh_token"])
    assert fresh.status_code == 200
    row = stored(OAuthRefreshToken, fresh.json()["refresh_token"])
    OAuthRefreshToken.objects.filter(pk=row.pk).update(created=timezone.now() - timedelta(days=30))
    stale = refresh(tokens["app"], fresh.json()["refresh_token"])
    assert stale.status_code == 400 and stale.json()["error"] == "invalid_grant"


def test_an_expired_access_token_is_refused(alice, project):
    tokens = connect(alice)
    OAuthAccessToken.objects.update(expires=timezone.now() - timedelta(seconds=1))
    response = bearer(tokens).mcp("ping")
    assert response.status_code == 401 and "expired" in response.json()["error"]["message"]
    assert bearer(tokens).get("/v1/me").status_code == 401
    assert tools(bearer(refresh(tokens["app"], tokens["refresh_token"]).json()))


def test_a_confidential_client_authenticates_at_the_token_endpoint(alice, project):
    post_app = registered(token_endpoint_auth_method="client_secret_post")
    code, verifier = a_code(alice, post_app)
    assert exchange(post_app, code, verifier).status_code == 401, "no secret"
    code, verifier = a_code(alice, post_app)
    assert exchange(post_app, code, verifier, client_secret="wrong").json()["error"] == "invalid_client"
    code, verifier = a_code(alice, post_app)
    assert exchange(post_app, code, verifier, client_secret=post_app["client_secret"]).status_code == 200

    basic_app = registered(token_endpoint_auth_method="client_secret_basic")
    code, verifier = a_code(alice, basic_app)
    credentials = base64.b64encode(f"{basic_app['client_id']}:{basic_app['client_secret']}".encode()).decode()
    response = token(
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "code_verifier": verifier,
            "resource": MCP_URL,
        },
        HTTP_AUTHORIZATION=f"Basic {credentials}",
    )
    assert response.status_code == 200, response.content
    assert refresh(basic_app, response.json()["refresh_token"]).status_code == 401, "a refresh needs the secret too"


def test_revoking_a_token_at_the_revocation_endpoint_ends_the_connection(alice, project):
    tokens = connect(alice)
    response = Client().post(
        "/oauth/revoke",
        {"token": tokens["refresh_token"], "token_type_hint": "refresh_token", "client_id": tokens["app"]["client_id"]},
    )
    assert response.status_code == 200
    assert Connection.objects.get().revoked_at is not None
    assert bearer(tokens).mcp("ping").status_code == 401


def test_a_disconnected_connection_issues_nothing(alice, project):
    app = registered()
    code, verifier = a_code(alice, app)
    connection_revoke(connection=Connection.objects.get())
    assert exchange(app, code, verifier).json()["error"] == "invalid_grant"


def test_leaving_the_project_ends_the_tokens_and_a_viewer_reads_only(project):
    erin = member(project, "erin@example.com", Role.MEMBER)
    tokens = connect(erin, access="write")
    assert tools(bearer(tokens))[-1] == "memory_add"
    Membership.objects.filter(user=erin).update(role=Role.VIEWER)
    assert tools(bearer(tokens)) == READ_TOOLS, "a Viewer's connection reads only"
    Membership.objects.filter(user=erin).delete()
    assert bearer(tokens).mcp("ping").status_code == 401
    assert refresh(tokens["app"], tokens["refresh_token"]).json()["error"] == "invalid_grant"


def test_a_member_demoted_to_viewer_loses_another_end_users_memory(bob, project):
    from accounts.services import end_user_get_or_create

    end_user_get_or_create(project=project, external_id="u_1")
    tokens = connect(bob, end_user="u_1")
    assert bearer(tokens).mcp("ping").status_code == 200
    Membership.objects.filter(user=bob).update(role=Role.VIEWER)
    assert bearer(tokens).mcp("ping").status_code == 401


def test_use_is_recorded_at_most_once_a_minute(alice, project):
    api = bearer(connect(alice))
    assert Connection.objects.get().last_used_at is None
    api.mcp("ping")
    first = Connection.objects.get().last_used_at
    assert first is not None
    api.mcp("ping")
    assert Connection.objects.get().last_used_at == first


@pytest.mark.parametrize("grant_type", ["password", "client_credentials", "implicit"])
def test_other_grant_types_are_refused(alice, project, grant_type):
    app = registered()
    response = token(
        {
            "grant_type": grant_type,
            "client_id": app["client_id"],
            "username": "alice@example.com",
            "password": "alice-password-1",
        }
    )
    assert response.status_code in (400, 401) and response.json()["error"] in (
        "unsupported_grant_type",
        "unauthorized_client",
        "invalid_client",
    )
