"""Discovery: protected-resource metadata (RFC 9728), authorization-server metadata (RFC 8414), and the
401 that points a client at them."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import OAuthAccessToken
from tests.conftest import Api
from tests.oauth_flow import ISSUER, MCP_URL, connect, stored

RESOURCE_METADATA = "http://testserver/.well-known/oauth-protected-resource/v1/mcp"


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-protected-resource/v1/mcp", "/.well-known/oauth-protected-resource"]
)
def test_it_serves_the_protected_resource_metadata(db, path):
    response = Client().get(path)
    assert response.status_code == 200
    assert response.json() == {
        "resource": MCP_URL,
        "authorization_servers": [ISSUER],
        "scopes_supported": ["memory:read", "memory:write"],
        "bearer_methods_supported": ["header"],
        "resource_name": "twin memory",
    }
    assert response["Access-Control-Allow-Origin"] == "*"


def test_the_authorization_server_is_named_by_its_exact_issuer(db):
    resource = Client().get("/.well-known/oauth-protected-resource/v1/mcp").json()
    server = Client().get("/.well-known/oauth-authorization-server").json()
    assert resource["authorization_servers"] == [server["issuer"]] == [ISSUER]


def test_it_serves_the_authorization_server_metadata(db):
    response = Client().get("/.well-known/oauth-authorization-server")
    assert response.status_code == 200
    body = response.json()
    assert body["issuer"] == ISSUER
    assert body["authorization_endpoint"] == "http://testserver/oauth/authorize"
    assert body["token_endpoint"] == "http://testserver/oauth/token"
    assert body["registration_endpoint"] == "http://testserver/oauth/register"
    assert body["revocation_endpoint"] == "http://testserver/oauth/revoke"
    assert body["code_challenge_methods_supported"] == ["S256"]
    assert body["token_endpoint_auth_methods_supported"] == ["none", "client_secret_post", "client_secret_basic"]
    assert body["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert body["response_types_supported"] == ["code"]
    assert body["scopes_supported"] == ["memory:read", "memory:write"]
    assert body["authorization_response_iss_parameter_supported"] is True
    assert body["client_id_metadata_document_supported"] is True  # sign-in by Client ID Metadata Document
    assert "introspection_endpoint" not in body


def test_the_metadata_names_the_host_it_was_asked_on(db):
    client = Client(HTTP_HOST="localhost")
    assert client.get("/.well-known/oauth-protected-resource/v1/mcp").json()["resource"] == "http://localhost/v1/mcp"
    assert client.get("/.well-known/oauth-authorization-server").json()["issuer"] == "http://localhost"


def _challenge(response):
    assert response.status_code == 401, response.content
    return response["WWW-Authenticate"]


def test_every_401_from_v1_mcp_points_at_the_resource_metadata(alice, project, write_key):
    tokens = connect(alice)
    expired = connect(alice)
    row = stored(OAuthAccessToken, expired["access_token"])
    row.expires = timezone.now() - timedelta(seconds=1)
    row.save(update_fields=["expires"])
    plain = f'Bearer resource_metadata="{RESOURCE_METADATA}"'
    refused = f'Bearer error="invalid_token", resource_metadata="{RESOURCE_METADATA}"'

    assert _challenge(Api(None, None).mcp("ping")) == plain
    assert _challenge(Api(None, None).mcp("ping", Authorization="Basic dXNlcjpwYXNz")) == plain
    assert _challenge(Api("tm_" + "x" * 43, "u_1").mcp("ping")) == plain
    assert _challenge(Api("not-a-token-we-issued", None).mcp("ping")) == refused
    assert _challenge(Api(expired["access_token"], None).mcp("ping")) == refused
    assert Api(tokens["access_token"], None).mcp("ping").status_code == 200
