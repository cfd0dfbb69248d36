"""Sign-in by Client ID Metadata Document: the app's client_id is an https URL, django-oauth-toolkit fetches
its metadata from there (no registration), and the card and Connected apps name the app and that URL's host.

The documents are served by a local https server with a test CA's certificate (tests/cimd.py); everything
else is the real flow through the real URLs.
"""

import pytest
from django.test import Client

from accounts.models import OAuthApplication
from tests.cimd import NAMED_HOSTS, DocumentServer, LoopbackFetcher
from tests.conftest import Api
from tests.oauth_flow import ISSUER, REDIRECT_URI, answer, authorize_query, card_post_data, exchange, pkce, refresh
from twin import capacity

HOST = NAMED_HOSTS[0]
CIMD_DOCUMENT_MAX = 16 * 1024  # the toolkit's CIMD_MAX_DOCUMENT_SIZE


@pytest.fixture
def documents(tmp_path, settings):
    """The document server, and the toolkit fetching from it (the test fetcher, for this test only)."""
    server = DocumentServer(tmp_path)
    LoopbackFetcher.ca_path = server.ca_path
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "CIMD_METADATA_FETCHER": "tests.cimd.LoopbackFetcher"}
    yield server
    LoopbackFetcher.ca_path = None
    server.close()


def test_the_service_fetches_documents_with_the_toolkits_safe_fetcher_two_at_a_time(settings):
    """What production runs: CIMD on, the toolkit's own fetcher (the loopback one exists only in tests/), and
    fewer fetches at once than a process has threads, so slow documents cannot take every thread."""
    provider = settings.OAUTH2_PROVIDER
    assert provider["CIMD_ENABLED"] is True and "CIMD_METADATA_FETCHER" not in provider
    assert provider["CIMD_MAX_CONCURRENT_FETCHES"] == 2 < capacity.WEB_THREADS


def metadata(client_id: str, **extra) -> dict:
    return {
        "client_id": client_id,
        "client_name": "Claude",
        "client_uri": "https://claude.ai",
        "redirect_uris": [REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **extra,
    }


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_metadata_offers_it_beside_dynamic_registration(db):
    body = Client().get("/.well-known/oauth-authorization-server").json()
    assert body["client_id_metadata_document_supported"] is True
    assert "none" in body["token_endpoint_auth_methods_supported"], "a document's client is public"
    assert body["registration_endpoint"] == "http://testserver/oauth/register", "kept for older clients"
    assert body["authorization_response_iss_parameter_supported"] is True  # RFC 9207


def test_an_app_signs_in_by_its_metadata_document(alice, project, documents):
    client_id = documents.publish("/oauth/claude.json", metadata(f"{documents.origin}/oauth/claude.json"))
    browser = logged_in(alice)
    verifier, challenge = pkce()
    query = authorize_query({"client_id": client_id}, challenge)
    card = browser.get(query)
    assert card.status_code == 200, card.content
    assert f'Claude</span> <span class="app-host">({HOST})</span> wants to use your twin memory' in card.text
    app = OAuthApplication.objects.get(client_id=client_id)
    assert app.registration_source == OAuthApplication.RegistrationSource.CIMD
    assert app.client_type == OAuthApplication.CLIENT_PUBLIC and app.name == "Claude"

    got = answer(browser.post(query, card_post_data(card, access="write")))
    assert got["iss"] == ISSUER and got["state"] == "st-1"  # RFC 9207 on this answer as on every other
    tokens = exchange({"client_id": client_id}, got["code"], verifier)
    assert tokens.status_code == 200, tokens.content
    tools = Api(tokens.json()["access_token"], None).mcp("tools/list").json()["result"]["tools"]
    assert tools[-1]["name"] == "memory_add"
    assert refresh({"client_id": client_id}, tokens.json()["refresh_token"]).status_code == 200

    apps = browser.get("/account/apps")
    assert f'Claude <span class="app-host">{HOST}</span>' in apps.text


def test_documents_it_cannot_trust_are_refused(alice, project, documents):
    origin = documents.origin
    plain = documents.publish("/plain.json", metadata(f"http://{HOST}/plain.json"))
    refused = {
        "http URL": plain.replace("https://", "http://"),
        "mismatched client_id": documents.publish("/other.json", metadata(f"{origin}/not-other.json")),
        "oversized": documents.publish("/big.json", metadata(f"{origin}/big.json", padding="x" * CIMD_DOCUMENT_MAX)),
        "not served": f"{origin}/missing.json",
    }
    browser = logged_in(alice)
    for why, client_id in refused.items():
        response = browser.get(authorize_query({"client_id": client_id}, pkce()[1]))
        assert response.status_code == 400 and "Location" not in response, why
        assert "This sign-in cannot continue" in response.text, why
        assert not OAuthApplication.objects.filter(client_id=client_id).exists(), why

    listed = documents.publish("/listed.json", metadata(f"{origin}/listed.json"))
    response = browser.get(authorize_query({"client_id": listed}, pkce()[1], redirect_uri="https://evil.example/cb"))
    assert response.status_code == 400 and "Location" not in response, "a redirect the document does not list"


def test_a_document_naming_its_app_with_a_bidirectional_control_is_refused(alice, project, documents):
    """An app's name is shown on one line (the card, Connected apps): one holding a bidirectional control
    (U+202E reverses what follows) could show another name than the one stored, so the document is refused,
    as a registration holding it is."""
    browser = logged_in(alice)
    for index, name in enumerate(("Claude\u202egnp.exe", "Cla\u2066ude", "Claude\nAdmin")):
        path = f"/named-{index}.json"
        client_id = documents.publish(path, metadata(documents.origin + path, client_name=name))
        response = browser.get(authorize_query({"client_id": client_id}, pkce()[1]))
        assert response.status_code == 400 and "This sign-in cannot continue" in response.text, name
        assert name not in response.text
        assert not OAuthApplication.objects.filter(client_id=client_id).exists(), name
