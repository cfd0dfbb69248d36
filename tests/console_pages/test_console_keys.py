"""API keys (/projects/<slug>/keys): the list, create (the key shown once, with copy, curl and MCP snippets)
and revoke with confirmation, for Owners, Admins and Members; Viewers neither see nor make keys."""

from html import unescape

import pytest
from django.test import Client

from accounts.models import ApiKey, Role
from tests.conftest import Api
from tests.console import ROLES, csrf_refused, html, in_role, logged_in


def _url(project, tail=""):
    return f"/projects/{project.slug}/keys{tail}"


def test_it_lists_keys_with_name_access_prefix_creator_and_dates(alice, project, read_key, write_key, api):
    api.add({"text": "hello"})
    page = html(logged_in(alice).get(_url(project)))
    for heading in ("Name", "Access", "Key", "Created by", "Created", "Last used"):
        assert f'<th scope="col">{heading}</th>' in page
    assert "alice read" in page and "alice write" in page and "Read and write" in page
    assert f"{read_key[0].prefix}…" in page and "alice@example.com" in page
    assert read_key[1] not in page and write_key[1] not in page, "never the key itself"
    assert "Never" in page, "the read key was not used"


@pytest.mark.parametrize("role", [Role.OWNER, Role.ADMIN, Role.MEMBER])
def test_owners_admins_and_members_create_a_key_shown_once(alice, project, role):
    person = in_role(project, role, alice=alice)
    client = logged_in(person)
    response = client.post(_url(project, "/new"), {"name": "backend", "access": "write"})
    page = html(response)
    key = ApiKey.objects.get(name="backend")
    raw = page.split('id="new-key" class="key" value="', 1)[1].split('"', 1)[0]
    assert response.status_code == 200 and raw.startswith("tm_") and raw.startswith(key.prefix)
    assert key.access == "write" and key.created_by == person
    assert "shown only this once" in page and 'data-copy="#new-key"' in page
    assert "curl -s http://testserver/v1/memory/search" in page and f"Bearer {raw}" in page
    assert f'TwinMemory(api_key="{raw}", account="END_USER_ID", base_url="http://testserver")' in unescape(page)
    assert f'new TwinMemory({{ apiKey: "{raw}", account: "END_USER_ID"' in unescape(page)
    for client_name in ("Claude Code", "Cursor", "VS Code", "Windsurf", "Codex", "Claude Desktop"):
        assert client_name in page
    assert "no-store" in response["Cache-Control"]
    assert raw not in html(client.get(_url(project))), "never shown again"
    assert raw not in str(dict(client.session)), "not kept in the session either"
    assert Api(raw, "u_1").tool("search", query="x").status_code in (200, 404)


def test_a_read_key_is_read(alice, project):
    logged_in(alice).post(_url(project, "/new"), {"name": "reader", "access": "read"})
    assert ApiKey.objects.get(name="reader").access == "read"


def test_it_needs_a_name_and_a_known_access(alice, project):
    client = logged_in(alice)
    assert client.post(_url(project, "/new"), {"name": "", "access": "read"}).status_code == 400
    assert client.post(_url(project, "/new"), {"name": "x", "access": "admin"}).status_code == 400
    assert not ApiKey.objects.exists()


def test_viewers_cannot_see_or_make_keys(project, read_key):
    client = logged_in(in_role(project, Role.VIEWER))
    assert client.get(_url(project)).status_code == 404
    assert client.post(_url(project, "/new"), {"name": "v", "access": "read"}).status_code == 404
    assert client.post(_url(project, f"/{read_key[0].pk}/revoke")).status_code == 404
    assert ApiKey.objects.count() == 1 and ApiKey.objects.get().revoked_at is None


def test_an_outsider_gets_404(project, read_key, charlie, other_project):
    client = logged_in(charlie)
    assert client.get(_url(project)).status_code == 404
    assert client.post(_url(project, "/new"), {"name": "x", "access": "write"}).status_code == 404
    assert client.get(_url(project, f"/{read_key[0].pk}/revoke")).status_code == 404
    assert client.post(f"/projects/{other_project.slug}/keys/{read_key[0].pk}/revoke").status_code == 404, (
        "another project's key through one's own project"
    )
    read_key[0].refresh_from_db()
    assert read_key[0].revoked_at is None


def test_it_needs_a_login(project):
    assert Client().get(_url(project)).status_code == 302
    assert Client().post(_url(project, "/new"), {"name": "x", "access": "read"}).status_code == 302


@pytest.mark.parametrize("role", [Role.OWNER, Role.ADMIN, Role.MEMBER])
def test_revoke_asks_then_the_key_stops_working(alice, project, read_key, role):
    key, raw = read_key
    client = logged_in(in_role(project, role, alice=alice))
    confirm = client.get(_url(project, f"/{key.pk}/revoke"))
    assert confirm.status_code == 200 and "Revoke alice read?" in html(confirm)
    key.refresh_from_db()
    assert key.revoked_at is None, "asking is not revoking"
    assert client.post(_url(project, f"/{key.pk}/revoke"))["Location"] == _url(project)
    assert Api(raw, "u_1").tool("search", query="x").status_code == 401
    assert "alice read" not in html(client.get(_url(project))).split("<h2>Keys</h2>")[1]


def test_key_forms_are_csrf_protected(alice, project, read_key):
    assert csrf_refused(alice, _url(project, "/new"), {"name": "x", "access": "read"})
    assert csrf_refused(alice, _url(project, f"/{read_key[0].pk}/revoke"))
    assert ApiKey.objects.count() == 1 and ApiKey.objects.get().revoked_at is None


@pytest.mark.parametrize("role", ROLES)
def test_the_keys_nav_link_follows_the_role(alice, project, role):
    page = html(logged_in(in_role(project, role, alice=alice)).get(f"/projects/{project.slug}"))
    assert (f'href="{_url(project)}"' in page) == (role != Role.VIEWER)
