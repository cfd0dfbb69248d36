"""/oauth/authorize: the log-in, the consent card, and the code it sends back (PKCE S256, resource, iss)."""

import pytest
from django.test import Client

from accounts.models import Connection, EndUser, OAuthApplication, OAuthGrant, Role
from accounts.services import end_user_get_or_create
from tests.conftest import first_group
from tests.oauth_flow import (
    BOTH,
    ISSUER,
    MCP_URL,
    answer,
    authorize_query,
    card_post_data,
    connect,
    consent,
    exchange,
    member,
    pkce,
    registered,
)


@pytest.fixture
def app(db):
    return registered(client_name="Claude")


def logged_in(user, **kwargs) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


def test_it_needs_a_console_login_then_shows_the_card(alice, project, app):
    url = authorize_query(app, pkce()[1])
    client = Client()
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith("/login?next=")
    login = client.get(response["Location"])
    assert login.status_code == 200 and b"Log in" in login.content
    back = client.post(
        response["Location"], {"username": "alice@example.com", "password": "alice-password-1", "next": url}
    )
    assert back.status_code == 302 and back["Location"] == url
    card = client.get(url)
    assert card.status_code == 200
    assert b"Claude</span> wants to use your twin memory" in card.content


def test_a_wrong_password_stays_on_the_login_page(alice, project):
    response = Client().post("/login", {"username": "alice@example.com", "password": "nope"})
    assert response.status_code == 200 and b'role="alert"' in response.content


def test_the_card_shows_the_app_the_project_the_end_user_and_the_access(alice, project, app):
    card = logged_in(alice).get(authorize_query(app, pkce()[1]))
    html = card.content.decode()
    assert "Claude" in html and "alice@example.com" in html
    assert '<option value="alice-co" data-can-write="1" selected>Alice Co (Owner)</option>' in html
    assert 'value="alice@example.com"' in html, "the person's own end user by default"
    assert "Read and save" in html and "memory:read memory:write" in html
    assert "Read only" in html
    assert "app.example" in html, "where the answer goes"
    assert card.context["form"]["access"].value() == "write"


def test_allow_sends_the_code_state_and_iss_back(alice, project, app):
    verifier, challenge = pkce()
    response = consent(logged_in(alice), authorize_query(app, challenge, state="xyz"), access="write")
    got = answer(response)
    assert set(got) == {"code", "state", "iss"}
    assert got["state"] == "xyz" and got["iss"] == ISSUER
    connection = Connection.objects.get()
    assert (connection.user, connection.project, connection.end_user.external_id, connection.access) == (
        alice,
        project,
        "alice@example.com",
        "write",
    )
    assert connection.application.client_id == app["client_id"]
    grant = OAuthGrant.objects.get(code=got["code"])
    assert grant.connection == connection
    assert grant.resource == [MCP_URL]
    assert grant.code_challenge_method == "S256"
    assert grant.scope == BOTH


def test_read_only_grants_memory_read(alice, project, app):
    verifier, challenge = pkce()
    got = answer(consent(logged_in(alice), authorize_query(app, challenge), access="read"))
    assert OAuthGrant.objects.get(code=got["code"]).scope == "memory:read"
    tokens = exchange(app, got["code"], verifier).json()
    assert tokens["scope"] == "memory:read"
    assert Connection.objects.get().access == "read"


def test_cancel_answers_access_denied(alice, project, app):
    got = answer(consent(logged_in(alice), authorize_query(app, pkce()[1]), allow=None))
    assert got == {"error": "access_denied", "state": "st-1", "iss": ISSUER}
    assert not Connection.objects.exists() and not OAuthGrant.objects.exists()


def test_pkce_is_required(alice, project, app):
    got = answer(logged_in(alice).get(authorize_query(app, None)))
    assert got["error"] == "invalid_request" and got["state"] == "st-1" and got["iss"] == ISSUER


@pytest.mark.parametrize("method", ["plain", None])
def test_pkce_must_be_s256(alice, project, app, method):
    url = authorize_query(app, None, code_challenge="a" * 43, code_challenge_method=method)
    got = answer(logged_in(alice).get(url))
    assert got["error"] == "invalid_request" and "S256" in got["error_description"]


def test_a_redirect_uri_not_registered_is_never_redirected_to(alice, project, app):
    response = logged_in(alice).get(authorize_query(app, pkce()[1], redirect_uri="https://evil.example/cb"))
    assert response.status_code == 400
    assert "Location" not in response
    assert b"This sign-in cannot continue" in response.content


def test_an_unknown_client_is_refused(alice, project):
    response = logged_in(alice).get(authorize_query({"client_id": "nope"}, pkce()[1]))
    assert response.status_code == 400 and "Location" not in response


def test_a_resource_other_than_this_servers_mcp_is_refused(alice, project, app):
    got = answer(logged_in(alice).get(authorize_query(app, pkce()[1], resource="https://other.example/v1/mcp")))
    assert got["error"] == "invalid_target" and got["iss"] == ISSUER
    got = answer(logged_in(alice).get(authorize_query(app, pkce()[1], resource="http://testserver/v1/memory")))
    assert got["error"] == "invalid_target"


def test_without_a_resource_the_code_is_still_bound_to_v1_mcp(alice, project, app):
    got = answer(consent(logged_in(alice), authorize_query(app, pkce()[1], resource=None)))
    assert OAuthGrant.objects.get(code=got["code"]).resource == [MCP_URL]


def test_a_resource_altered_on_the_card_is_refused_without_redirect(alice, project, app):
    client, url = logged_in(alice), authorize_query(app, pkce()[1])
    data = card_post_data(client.get(url), resource="https://other.example/v1/mcp")
    response = client.post(url, data)
    assert response.status_code == 400 and "Location" not in response
    assert not OAuthGrant.objects.exists() and not Connection.objects.exists()


def test_an_app_asking_to_read_is_offered_read_only(alice, project, app):
    client, url = logged_in(alice), authorize_query(app, pkce()[1], scope="memory:read")
    card = client.get(url)
    assert b"Read and save" not in card.content and card.context["form"]["access"].value() == "read"
    refused = client.post(url, card_post_data(card, access="write"))
    assert refused.status_code == 200 and b"Choose one of the accesses offered." in refused.content
    assert not Connection.objects.exists()


def test_the_grant_is_at_most_what_the_app_asked_for(alice, project, app):
    """The card carries the scope the app asked for in a hidden field: widened there (memory:read to both), the
    answer is refused and nothing is granted; the card as shown grants Read only."""
    client, url = logged_in(alice), authorize_query(app, pkce()[1], scope="memory:read")
    card = client.get(url)
    widened = client.post(url, card_post_data(card, scope=BOTH, access="write"))
    assert widened.status_code == 400 and "Location" not in widened
    assert not Connection.objects.exists() and not OAuthGrant.objects.exists()
    granted = answer(client.post(url, card_post_data(card, access="read")))
    assert OAuthGrant.objects.get(code=granted["code"]).scope == "memory:read"


def test_a_viewer_can_grant_read_only(project):
    dana = member(project, "dana@example.com", Role.VIEWER)
    app = registered()
    client, url = logged_in(dana), authorize_query(app, pkce()[1])
    card = client.get(url)
    assert card.context["form"]["access"].value() == "read", "Read only is preselected for a Viewer"
    assert b"Read and save" not in card.content, "a Viewer everywhere is offered Read only"
    refused = client.post(url, card_post_data(card, access="write"))  # posted by hand all the same
    assert refused.status_code == 200 and b"Choose one of the accesses offered." in refused.content
    assert not Connection.objects.exists()
    answer(client.post(url, card_post_data(card, access="read")))
    assert Connection.objects.get().access == "read"


def test_a_viewer_connects_only_their_own_end_user(project):
    dana = member(project, "dana@example.com", Role.VIEWER)
    end_user_get_or_create(project=project, external_id="u_1")
    client, url = logged_in(dana), authorize_query(registered(), pkce()[1])
    refused = client.post(url, card_post_data(client.get(url), access="read", end_user="u_1"))
    assert b"you can connect only your own end user" in refused.content
    answer(consent(client, url, access="read"))
    assert Connection.objects.get().end_user.external_id == "dana@example.com"


def test_a_member_may_pick_another_existing_end_user(bob, project, app):
    end_user_get_or_create(project=project, external_id="u_1")
    client, url = logged_in(bob), authorize_query(app, pkce()[1])
    answer(consent(client, url, end_user="u_1"))
    connection = Connection.objects.get()
    assert (connection.user, connection.end_user.external_id, connection.access) == (bob, "u_1", "write")


def test_an_end_user_that_does_not_exist_is_refused(bob, project, app):
    client, url = logged_in(bob), authorize_query(app, pkce()[1])
    refused = client.post(url, card_post_data(client.get(url), end_user="u_404"))
    assert refused.status_code == 200 and b"Alice Co has no end user" in refused.content
    assert not EndUser.objects.filter(external_id="u_404").exists()


def test_the_own_end_user_is_created_on_grant(alice, project, app):
    assert not EndUser.objects.filter(project=project).exists()
    answer(consent(logged_in(alice), authorize_query(app, pkce()[1])))
    assert list(EndUser.objects.values_list("external_id", flat=True)) == ["alice@example.com"]


def test_another_persons_project_cannot_be_chosen(alice, project, other_project, app):
    client, url = logged_in(alice), authorize_query(app, pkce()[1])
    card = client.get(url)
    assert b"Charlie Co" not in card.content
    refused = client.post(url, card_post_data(card, project=other_project.slug))
    assert refused.status_code == 200 and b"Choose one of your projects." in refused.content
    assert not Connection.objects.exists()


def test_a_person_on_no_project_can_only_cancel(charlie, app):
    card = logged_in(charlie).get(authorize_query(app, pkce()[1]))
    assert b"You are not a member of any project yet" in card.content
    assert b'name="allow"' not in card.content


def test_the_card_is_csrf_protected(alice, project, app):
    client, url = logged_in(alice, enforce_csrf_checks=True), authorize_query(app, pkce()[1])
    card = client.get(url)
    assert b'name="csrfmiddlewaretoken"' in card.content
    forged = client.post(url, card_post_data(card))
    assert forged.status_code == 403
    assert not Connection.objects.exists()


def test_the_card_cannot_be_framed(alice, project, app):
    card = logged_in(alice).get(authorize_query(app, pkce()[1]))
    assert card["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in card["Content-Security-Policy"]
    assert "no-store" in card["Cache-Control"]


def test_signing_in_again_replaces_the_earlier_connection(alice, project, app):
    client = logged_in(alice)
    answer(consent(client, authorize_query(app, pkce()[1])))
    first = Connection.objects.get()
    answer(consent(client, authorize_query(app, pkce()[1]), access="read"))
    first.refresh_from_db()
    assert first.revoked_at is not None
    assert Connection.objects.filter(revoked_at__isnull=True).get().access == "read"
    assert OAuthApplication.objects.count() == 1


def test_the_card_is_shown_every_time(alice, project, app):
    connect(alice, app=app)  # tokens exist: the toolkit's approval_prompt=auto would skip the card
    again = logged_in(alice).get(authorize_query(app, pkce()[1], approval_prompt="auto"))
    assert again.status_code == 200 and b"wants to use your twin memory" in again.content


def test_a_viewer_in_one_project_and_member_in_another_sees_which_allows_saving(project, other_project):
    member(project, "dana@example.com", Role.VIEWER)
    dana = member(other_project, "dana@example.com", Role.MEMBER)  # the same person, as she now stands
    client, url = logged_in(dana), authorize_query(registered(), pkce()[1])
    html = client.get(url).content.decode()
    assert 'value="write"' in html  # Read and save is offered: Dana may save in Charlie Co
    assert f'value="{project.slug}" data-can-write="0"' in html  # and the card's script turns it off here
    assert f'value="{other_project.slug}" data-can-write="1"' in html
    refused = client.post(url, card_post_data(client.get(url), access="write", project=project.slug))
    assert b"As a Viewer of Alice Co you can grant Read only." in refused.content


def test_an_end_user_refused_on_the_card_is_not_quoted_in_the_error(bob, project, app):
    client, url = logged_in(bob), authorize_query(app, pkce()[1])
    refused = client.post(url, card_post_data(client.get(url), end_user="u_evil-7f3a"))
    error = first_group(r'<p class="field-error" id="end-user-error"[^>]*>(.*?)</p>', refused.content.decode())
    assert "has no end user" in error and "evil-7f3a" not in error
