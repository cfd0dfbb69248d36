"""Rate limits per credential: requests a minute per key or app, and per key or app and end user, over the
HTTP API and MCP alike; set per project by its Owners and Admins; counted as throttled on the Usage page;
and never a reason to refuse service when Redis does not answer."""

import re
import socket
import time
import types

import pytest

from accounts import ratelimit
from accounts.models import Project, Role
from accounts.services import project_set_rate_limits
from memory.models import UsageDay
from memory.selectors import scoped
from tests.conftest import Api
from tests.console import csrf_refused, html, in_role, logged_in
from tests.oauth_flow import connect

RATE_LIMITED = -32011


def limit(project, *, per_credential=None, per_end_user=None):
    project_set_rate_limits(project=project, per_credential=per_credential, per_end_user=per_end_user)


def served(response) -> bool:
    """Answered, not refused for rate (this end user's memory may be empty: 404 is an answer)."""
    return response.status_code != 429


@pytest.fixture
def clock(monkeypatch):
    """The limiter's clock, fixed at the start of a minute and moved by hand."""
    now = [1_900_000_020.0]
    monkeypatch.setattr("accounts.throttle.time", types.SimpleNamespace(time=lambda: now[0]))
    return now


def test_every_answer_says_where_the_caller_stands(api, project):
    limit(project, per_end_user=5)
    first, second = api.tool("ls"), api.tool("ls")
    assert first["RateLimit-Policy"] == '"credential";q=6000;w=60, "end-user";q=5;w=60'
    assert re.fullmatch(r'"credential";r=5999;t=\d+, "end-user";r=4;t=\d+', first["RateLimit"]), first["RateLimit"]
    assert second["RateLimit"].split(", ")[1].startswith('"end-user";r=3;')
    assert "Retry-After" not in first


def test_a_key_over_its_limit_for_one_end_user_waits_while_its_other_end_users_are_served(api, project):
    limit(project, per_end_user=3)
    assert all(served(api.tool("ls")) for _ in range(3))
    refused = api.tool("ls")
    assert refused.status_code == 429
    body, wait = refused.json(), int(refused["Retry-After"])
    assert 0 < wait <= 2 * 60 and body["error"] == "rate_limited" and body["retry_after"] == wait
    assert "limit of 3 requests a minute for one end user" in body["message"]
    assert refused["RateLimit"].split(", ")[1] == f'"end-user";r=0;t={wait}'
    assert served(api.as_account("u_2").tool("ls")), "another end user of the same key"


def test_a_key_over_its_limit_in_all_is_refused_for_every_end_user(api, project, charlie_api):
    limit(project, per_credential=2)
    assert served(api.tool("ls")) and served(api.as_account("u_2").tool("ls"))
    assert api.as_account("u_3").tool("ls").status_code == 429
    assert api.as_account("u_3").tool("ls").json()["message"].startswith("Over this key's or app's limit of 2 ")
    assert served(charlie_api.tool("ls")), "another project's key has its own allowance"


def test_over_mcp_the_refusal_is_json_rpc_minus_32011_with_the_wait(api, project):
    limit(project, per_end_user=1)
    assert served(api.mcp("tools/list"))
    refused = api.mcp("tools/call", {"name": "memory_ls", "arguments": {}}, request_id=7)
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["code"] == RATE_LIMITED
    retry_after, request_id = int(refused["Retry-After"]), refused["X-Request-Id"]
    assert error["data"] == {"error": "rate_limited", "retry_after": retry_after, "request_id": request_id}
    assert refused["RateLimit-Policy"] and refused["RateLimit"].endswith(f"t={refused['Retry-After']}")


def test_each_oauth_connection_is_a_credential_of_its_own(alice, project, api):
    limit(project, per_end_user=2)
    first, second = (Api(connect(alice)["access_token"], None) for _ in range(2))
    assert served(first.mcp("tools/list")) and served(first.mcp("tools/list"))
    refused = first.mcp("tools/list")
    assert refused.status_code == 429 and refused.json()["error"]["code"] == RATE_LIMITED
    assert served(second.mcp("tools/list")) and served(api.tool("ls")), "another connection, a key"


def test_refused_calls_are_not_counted_so_waiting_retry_after_is_enough(api, project, clock):
    limit(project, per_end_user=2)
    assert served(api.tool("ls")) and served(api.tool("ls"))
    waits = [int(api.tool("ls")["Retry-After"]) for _ in range(5)]
    assert waits == [waits[0]] * 5, "hammering does not push the wait out"
    clock[0] += waits[0]
    assert served(api.tool("ls"))


def test_a_projects_own_limits_hold_from_the_next_request(api, project):
    assert served(api.tool("ls"))
    limit(project, per_end_user=1)
    assert api.tool("ls").status_code == 429
    limit(project)  # back to the defaults
    assert served(api.tool("ls"))


def test_throttled_calls_are_counted_apart_and_shown_on_the_usage_page(api, write_key, project, alice):
    limit(project, per_end_user=1)
    api.tool("ls")
    api.tool("ls")
    api.mcp("tools/list")
    with scoped(project.pk):
        rows = {(u.tool, u.surface): u for u in UsageDay.objects.all()}
    assert rows[("", "http")].throttled == 1 and rows[("", "mcp")].throttled == 1
    assert rows[("", "http")].requests == 0 and rows[("memory_ls", "http")].requests == 1
    assert rows[("", "http")].credential == write_key[0].prefix
    page = html(logged_in(alice).get(f"/projects/{project.slug}/usage"))
    totals = page.split('<dl class="stats">', 1)[1].split("</dl>", 1)[0]
    assert "<dt>Throttled</dt><dd>2</dd>" in totals and "<dt>Requests</dt><dd>1</dd>" in totals
    assert "<code></code>" not in page, "no tool row for the throttled calls"


@pytest.fixture
def silent_redis():
    """A server that accepts connections and never answers."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        yield f"redis://127.0.0.1:{server.getsockname()[1]}/0"


@pytest.mark.parametrize("down", ["silent", "closed"])
def test_when_redis_does_not_answer_in_50_ms_the_call_is_served(
    api, project, settings, monkeypatch, down, silent_redis
):
    monkeypatch.setattr(ratelimit, "_paused_until", 0.0)  # restored after the test: later tests are limited
    limit(project, per_end_user=1)
    settings.REDIS_URL = silent_redis if down == "silent" else "redis://127.0.0.1:1/0"
    started = time.monotonic()
    answers = [api.tool("ls") for _ in range(3)]
    assert all(served(a) for a in answers)
    assert time.monotonic() - started < 1.0, "one 50 ms wait, then the limiter pauses"
    assert "RateLimit" not in answers[0]


@pytest.mark.parametrize("role", [Role.OWNER, Role.ADMIN])
def test_owners_and_admins_set_the_limits_in_settings(alice, project, api, role):
    client = logged_in(in_role(project, role, alice=alice))
    page = html(client.get(f"/projects/{project.slug}/settings"))
    assert "Rate limits" in page and "<strong>6000</strong> a minute per key or app" in page
    response = client.post(f"/projects/{project.slug}/limits", {"per_credential": "1200", "per_end_user": ""})
    assert response.status_code == 302 and response["Location"] == f"/projects/{project.slug}/settings"
    project.refresh_from_db()
    assert (project.rate_limit_per_credential, project.rate_limit_per_end_user) == (1200, None)
    assert api.tool("ls")["RateLimit-Policy"] == '"credential";q=1200;w=60, "end-user";q=600;w=60'
    assert "<strong>1200</strong> a minute per key or app" in html(client.get(f"/projects/{project.slug}/settings"))


def test_a_limit_out_of_bounds_is_refused(alice, project):
    response = logged_in(alice).post(f"/projects/{project.slug}/limits", {"per_credential": "0", "per_end_user": "x"})
    assert response.status_code == 400 and 'aria-invalid="true"' in html(response)
    assert Project.objects.get(pk=project.pk).rate_limit_per_credential is None


@pytest.mark.parametrize("role", [Role.MEMBER, Role.VIEWER])
def test_members_and_viewers_cannot_set_limits(alice, project, role):
    response = logged_in(in_role(project, role, alice=alice)).post(
        f"/projects/{project.slug}/limits", {"per_credential": "1"}
    )
    assert response.status_code == 404
    assert Project.objects.get(pk=project.pk).rate_limit_per_credential is None


def test_an_outsider_cannot_set_limits_and_it_is_csrf_protected(alice, project, charlie):
    assert logged_in(charlie).post(f"/projects/{project.slug}/limits", {"per_credential": "1"}).status_code == 404
    assert csrf_refused(alice, f"/projects/{project.slug}/limits", {"per_credential": "1"})
    assert Project.objects.get(pk=project.pk).rate_limit_per_credential is None
