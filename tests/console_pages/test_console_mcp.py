"""The MCP page (/projects/<slug>/mcp): how to connect each client, with the exact config, for everyone in the
project (Viewers included); the project's OAuth connections and Disconnect for Owners and Admins only.
(Disconnect itself is tested in tests/oauth/test_connected_apps.py.)"""

import json
from html import unescape

import pytest
from django.test import Client

from accounts.models import Connection, Role
from tests.console import ROLES, csrf_refused, html, in_role, logged_in
from tests.oauth_flow import connect, registered

CLIENTS = (
    "Claude Code",
    "Cursor",
    "VS Code",
    "Windsurf",
    "Codex",
    "Claude Desktop (through mcp-remote)",
    "claude.ai",
    "ChatGPT",
)


def _url(project):
    return f"/projects/{project.slug}/mcp"


@pytest.mark.parametrize("role", ROLES)
def test_everyone_in_the_project_gets_every_clients_config(alice, project, role):
    response = logged_in(in_role(project, role, alice=alice)).get(_url(project))
    page = html(response)
    assert response.status_code == 200
    for name in CLIENTS:
        assert name in page, name
    assert "claude mcp add --transport http twin-memory http://testserver/v1/mcp" in page
    assert "mcp-remote" in page and "[mcp_servers.twin_memory]" in page
    assert "X-Twin-Account: END_USER_ID" in page and 'data-copy="#snippet-cursor"' in page
    assert 'TwinMemory(api_key="tm_YOUR_KEY", account="END_USER_ID", base_url="http://testserver")' in unescape(page)
    assert 'new TwinMemory({ apiKey: "tm_YOUR_KEY", account: "END_USER_ID"' in unescape(page)


def test_the_json_configs_are_valid_json(alice, project):
    from console.clients import client_configs

    for config in client_configs("https://example.test/v1/mcp"):
        if config["text"].startswith("{"):
            parsed = json.loads(config["text"])
            assert "twin-memory" in json.dumps(parsed)


@pytest.mark.parametrize("role", ROLES)
def test_only_owners_and_admins_see_the_connections(alice, project, bob, role):
    connect(bob, app=registered(client_name="Bobs ChatGPT"))
    page = html(logged_in(in_role(project, role, alice=alice)).get(_url(project)))
    sees = role in (Role.OWNER, Role.ADMIN)
    assert ("Bobs ChatGPT" in page) == sees and ("Disconnect" in page) == sees


@pytest.mark.parametrize("role", [Role.MEMBER, Role.VIEWER])
def test_members_and_viewers_cannot_disconnect(alice, project, role):
    connect(alice)
    client = logged_in(in_role(project, role))
    assert client.post(f"{_url(project)}/{Connection.objects.get().pk}/disconnect").status_code == 404
    assert Connection.objects.get().revoked_at is None


def test_an_outsider_gets_404_and_a_stranger_logs_in(project, charlie):
    assert logged_in(charlie).get(_url(project)).status_code == 404
    assert Client().get(_url(project)).status_code == 302


def test_disconnect_is_csrf_protected(alice, project):
    connect(alice)
    assert csrf_refused(alice, f"{_url(project)}/{Connection.objects.get().pk}/disconnect")
    assert Connection.objects.get().revoked_at is None


def test_the_page_says_what_each_client_shows_commands_and_at_mentions(alice, project):
    page = html(logged_in(alice).get(_url(project)))
    assert "/twin-memory:&lt;prompt&gt;" in page or "/twin-memory:<prompt>" in page
    for prompt in ("recall", "remember", "catch_up", "forget_about"):
        assert f"<code>{prompt}</code>" in page, prompt
    assert "twin-memory://passages/{+path}" in page and "twin-memory://subjects/{subject}.md" in page
    assert "@" in page and "memory_search" in page
