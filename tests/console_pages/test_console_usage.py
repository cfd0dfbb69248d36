"""Usage (/projects/<slug>/usage): per day, requests by tool and by key, items added, model calls; the last
errors. Everyone in the project sees it; an outsider gets 404 and never another project's numbers."""

import pytest
from django.test import Client

from tests.console import ROLES, html, in_role, logged_in


def _url(project):
    return f"/projects/{project.slug}/usage"


@pytest.fixture
def traffic(api, read_api, charlie_api):
    api.add({"text": "I like tea."}, {"text": "I live in Porto."})
    api.tool("search", query="tea")
    read_api.tool("read", path="no/such/file.md")
    charlie_api.add({"text": "Charlie's secret plan."})
    charlie_api.tool("read", path="charlie/only.md")
    return api


@pytest.mark.parametrize("role", ROLES)
def test_everyone_in_the_project_sees_usage(alice, project, traffic, read_key, write_key, role):
    response = logged_in(in_role(project, role, alice=alice)).get(_url(project))
    page = html(response)
    assert response.status_code == 200
    assert "<code>memory_add</code>" in page and "<code>memory_search</code>" in page
    assert f"alice write ({write_key[0].prefix}…)" in page and f"alice read ({read_key[0].prefix}…)" in page
    totals = page.split('<dl class="stats">', 1)[1].split("</dl>", 1)[0]
    assert "<dt>Requests</dt><dd>3</dd>" in totals and "<dt>Items added</dt><dd>2</dd>" in totals
    assert "<dt>Errors</dt><dd>1</dd>" in totals and "<dt>Model calls</dt><dd>0</dd>" in totals
    assert "no/such/file.md" in page, "the last errors"
    assert "charlie/only.md" not in page and "Charlie" not in page.split("</header>", 1)[1].split("Last errors")[0]


def test_it_offers_7_30_and_90_days(alice, project, traffic):
    client = logged_in(alice)
    page = html(client.get(_url(project), {"days": "30"}))
    assert page.count('<tr><th scope="row"><time') == 30
    assert client.get(_url(project), {"days": "nonsense"}).status_code == 200


def test_it_needs_a_login_and_an_outsider_gets_404(project, traffic, charlie):
    assert Client().get(_url(project)).status_code == 302
    assert logged_in(charlie).get(_url(project)).status_code == 404
