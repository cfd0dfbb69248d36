"""Account > Connected apps (/account/apps) and a project's MCP page (/projects/<slug>/mcp): who sees which
connections, and Disconnect from both, which ends the app's tokens at once."""

import pytest
from django.test import Client

from accounts.models import Connection, OAuthAccessToken, OAuthRefreshToken, Role
from tests.conftest import Api
from tests.oauth_flow import connect, member, refresh, registered


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def dead(tokens) -> bool:
    """Both tokens of a connection refused: the access token at /v1/mcp, the refresh token at /oauth/token."""
    access_refused = Api(tokens["access_token"], None).mcp("ping").status_code == 401
    refresh_refused = refresh(tokens["app"], tokens["refresh_token"]).status_code == 400
    return access_refused and refresh_refused


def test_it_lists_the_persons_connections(alice, project, bob):
    tokens = connect(alice, access="read", app=registered(client_name="ChatGPT"))
    Api(tokens["access_token"], None).mcp("ping")
    connect(bob, app=registered(client_name="Bobs Claude"))
    response = logged_in(alice).get("/account/apps")
    assert response.status_code == 200
    html = response.content.decode()
    for heading in ("App", "Project", "End user", "Access", "Connected", "Last used"):
        assert f'<th scope="col">{heading}</th>' in html
    assert "ChatGPT" in html and "Alice Co" in html and "alice@example.com" in html and "Read only" in html
    assert "Never" not in html, "it was used"
    assert "Bobs Claude" not in html, "only the person's own connections"
    assert "Disconnect" in html
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]


def test_it_needs_a_login(db):
    response = Client().get("/account/apps")
    assert response.status_code == 302 and response["Location"].startswith("/login?next=/account/apps")


def test_it_says_when_nothing_is_connected(alice):
    assert b"No apps are connected." in logged_in(alice).get("/account/apps").content


def test_disconnect_ends_the_connection_at_once(alice, project):
    tokens = connect(alice)
    other = connect(alice, app=registered(client_name="Other"))
    connection = Connection.objects.get(application__client_id=tokens["app"]["client_id"])
    client = logged_in(alice)
    response = client.post(f"/account/apps/{connection.pk}/disconnect")
    assert response.status_code == 302 and response["Location"] == "/account/apps"
    assert dead(tokens)
    assert not OAuthAccessToken.objects.filter(connection=connection).exists()
    assert not OAuthRefreshToken.objects.filter(connection=connection, revoked__isnull=True).exists()
    page = client.get("/account/apps").content.decode()
    assert "Disconnected Claude: it must sign in again." in page
    assert "Other" in page and Api(other["access_token"], None).mcp("ping").status_code == 200


def test_disconnect_is_post_only(alice, project):
    connect(alice)
    assert logged_in(alice).get(f"/account/apps/{Connection.objects.get().pk}/disconnect").status_code == 405


def test_another_persons_connection_is_404(alice, project, bob):
    tokens = connect(bob)
    response = logged_in(alice).post(f"/account/apps/{Connection.objects.get().pk}/disconnect")
    assert response.status_code == 404
    assert logged_in(alice).post("/account/apps/999999/disconnect").status_code == 404
    assert Api(tokens["access_token"], None).mcp("ping").status_code == 200


@pytest.mark.parametrize("role", [Role.OWNER, Role.ADMIN])
def test_owners_and_admins_see_every_connection_of_the_project(alice, project, bob, other_project, charlie, role):
    viewer = alice if role == Role.OWNER else member(project, "erin@example.com", Role.ADMIN)
    connect(alice, app=registered(client_name="Alices Claude"))
    connect(bob, access="read", app=registered(client_name="Bobs ChatGPT"))
    connect(charlie, app=registered(client_name="Charlies Claude"))
    response = logged_in(viewer).get(f"/projects/{project.slug}/mcp")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Alices Claude" in html and "Bobs ChatGPT" in html and "bob@example.com" in html
    assert "Charlies Claude" not in html, "another project's connections"
    assert "http://testserver/v1/mcp" in html, "the URL to paste"


@pytest.mark.parametrize("role", [Role.MEMBER, Role.VIEWER])
def test_members_and_viewers_see_the_instructions_but_no_connections(alice, project, role):
    connect(alice, app=registered(client_name="Alices Claude"))
    person = member(project, "dana@example.com", role)
    response = logged_in(person).get(f"/projects/{project.slug}/mcp")
    assert response.status_code == 200
    assert "Alices Claude" not in response.content.decode() and "Disconnect" not in response.content.decode()


def test_an_outsider_gets_404(project, charlie, other_project):
    client = logged_in(charlie)
    assert client.get(f"/projects/{project.slug}/mcp").status_code == 404
    assert client.get("/projects/no-such-project/mcp").status_code == 404
    assert client.get(f"/projects/{other_project.slug}/mcp").status_code == 200


def test_the_mcp_page_needs_a_login(project):
    assert Client().get(f"/projects/{project.slug}/mcp").status_code == 302


def test_an_owner_disconnects_a_members_app_from_the_mcp_page(alice, project, bob):
    tokens = connect(bob)
    connection = Connection.objects.get()
    client = logged_in(alice)
    response = client.post(f"/projects/{project.slug}/mcp/{connection.pk}/disconnect")
    assert response.status_code == 302 and response["Location"] == f"/projects/{project.slug}/mcp"
    assert dead(tokens)
    assert "Disconnected Claude of bob@example.com." in client.get(f"/projects/{project.slug}/mcp").content.decode()
    assert b"No apps are connected." in logged_in(bob).get("/account/apps").content


def test_a_member_cannot_disconnect_from_the_mcp_page(alice, project, bob):
    tokens = connect(alice)
    response = logged_in(bob).post(f"/projects/{project.slug}/mcp/{Connection.objects.get().pk}/disconnect")
    assert response.status_code == 404
    assert Api(tokens["access_token"], None).mcp("ping").status_code == 200


def test_no_disconnect_across_projects(alice, project, charlie, other_project):
    tokens = connect(alice)
    pk = Connection.objects.get().pk
    response = logged_in(charlie).post(f"/projects/{other_project.slug}/mcp/{pk}/disconnect")
    assert response.status_code == 404
    assert Api(tokens["access_token"], None).mcp("ping").status_code == 200


def test_log_out_is_a_post(alice):
    client = logged_in(alice)
    assert client.get("/logout").status_code == 405
    assert client.post("/logout")["Location"] == "/login"
    assert client.get("/account/apps").status_code == 302
