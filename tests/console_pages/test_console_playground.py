"""The playground (/projects/<slug>/playground): the form from the registry's schema, runs through the registry
under the member's role, the answer readable and as JSON (the HTTP route's), and the same call as curl and MCP.

Alice owns "Alice Co", Bob is a Member of it, Charlie is an outsider with "Charlie Co".
"""

import json
import re
from typing import Any

import pytest
from django.db import connections
from django.test import Client

from accounts.models import EndUser, Role
from console.playground_answer import item_note
from memory.limits import GREP_LIMIT_DEFAULT, GREP_LIMIT_MAX, ITEM_TEXT_MAX, TEXT_MAX
from memory.models import Item, UsageDay
from memory.selectors import scoped
from memory.tools import mcp_tools
from tests.oauth_flow import member
from twin.database import DEFAULT, OWNER

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


def logged_in(user, **kwargs) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


def page_url(project) -> str:
    return f"/projects/{project.slug}/playground"


def run(client, project, tool: str, end_user: str = "u_1", **fields):
    """POST the playground's form: `fields` are the form's inputs (arg-<name>, items-0-text…)."""
    return client.post(f"{page_url(project)}/run", {"tool": tool, "end_user": end_user, **fields})


def answer_of(response) -> dict:
    return response.context["result"]["answer"]


def without_request_id(body: dict) -> dict:
    """An answer without its request id: each request has its own."""
    return {key: value for key, value in body.items() if key != "request_id"}


def offered(html: str) -> list[str]:
    return re.findall(r'<option value="(memory_\w+)"', html)


def save(client, project, text: str, end_user: str = "u_1", **item):
    fields = {"items-0-text": text, "items-0-kind": "note", "arg-wait": "1"}
    fields.update({f"items-0-{k}": v for k, v in item.items()})
    response = run(client, project, "memory_add", end_user, **fields)
    assert response.status_code == 200, response.content.decode()[:2000]
    return answer_of(response)


# --- the page and its form -----------------------------------------------------------------------------------


def test_it_builds_the_form_from_the_tools_schema(alice, project):
    response = logged_in(alice).get(page_url(project) + "?tool=memory_grep")
    assert response.status_code == 200
    html = response.content.decode()
    assert offered(html) == READ_TOOLS + ["memory_add"]
    assert re.search(
        rf'<input type="text" name="arg-pattern" id="pg-arg-pattern" value="" maxlength="{TEXT_MAX}" '
        r'minlength="1" required',
        html,
    )
    assert re.search(
        rf'<input type="number" name="arg-limit" id="pg-arg-limit" value="{GREP_LIMIT_DEFAULT}" step="1" '
        rf'min="1" max="{GREP_LIMIT_MAX}"',
        html,
    )
    assert "Exact substring match" in html, "the tool's description"
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
    assert "<script>" not in html and "console/playground.js" in html, "no inline script: the CSP forbids it"


def test_memory_add_has_item_rows_with_their_bounds(alice, project):
    html = logged_in(alice).get(page_url(project) + "?tool=memory_add").content.decode()
    assert f'name="items-0-text" id="pg-items-0-text" rows="4" maxlength="{ITEM_TEXT_MAX}"' in html
    assert re.search(r'<select name="items-0-kind".*?<option value="note" selected>note</option>', html, re.S)
    assert re.search(r'name="items-0-at"[^>]*pattern="\^\[0-9\]\{4\}', html), "dates carry the ISO pattern"
    for name in ("items-0-id", "items-0-author", "items-0-session", "items-json", "arg-wait"):
        assert f'name="{name}"' in html
    assert 'type="checkbox" name="arg-wait"' in html and "1 to 500 entries" in html


def test_it_needs_a_login(project):
    response = Client().get(page_url(project))
    assert response.status_code == 302 and response["Location"].startswith("/login")
    assert Client().post(page_url(project) + "/run", {"tool": "memory_overview"}).status_code == 302


def test_an_outsider_gets_404(project, charlie, other_project):
    client = logged_in(charlie)
    assert client.get(page_url(project)).status_code == 404
    assert run(client, project, "memory_overview").status_code == 404
    assert client.get("/projects/no-such-project/playground").status_code == 404


# --- roles -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", [Role.OWNER, Role.ADMIN, Role.MEMBER])
def test_owners_admins_and_members_run_write_tools(alice, project, role):
    person = alice if role == Role.OWNER else member(project, f"{role}@example.com", role)
    client = logged_in(person)
    assert "memory_add" in offered(client.get(page_url(project)).content.decode())
    added = save(client, project, "I moved to Porto in 2023.", at="2023-05-01", id="home-1")
    assert added["items"] == [{"id": "home-1", "status": "added", "searchable": True}]
    found = answer_of(run(client, project, "memory_search", **{"arg-query": "Where do I live?"}))
    assert found["hits"][0]["text"] == "I moved to Porto in 2023."


def test_a_viewer_runs_read_tools_only(alice, project, api):
    api.add({"text": "I moved to Porto in 2023."})
    client = logged_in(member(project, "vera@example.com", Role.VIEWER))
    html = client.get(page_url(project)).content.decode()
    assert offered(html) == READ_TOOLS and "read-only access" in html
    assert "memory_add" not in offered(client.get(page_url(project) + "?tool=memory_add").content.decode())
    response = run(client, project, "memory_grep", **{"arg-pattern": "Porto"})
    assert response.status_code == 200 and answer_of(response)["found"] == 1


@pytest.mark.parametrize("role", [Role.OWNER, Role.ADMIN, Role.MEMBER, Role.VIEWER])
def test_the_end_users_export_and_import_are_linked(alice, project, api, role):
    """Every role that sees the memory downloads its export; Owners and Admins are led to its Import."""
    api.as_account("customer:42").add({"text": "Order 42 shipped."})
    person = alice if role == Role.OWNER else member(project, f"{role}@example.com", role)
    html = logged_in(person).get(page_url(project) + "?end_user=customer:42").content.decode()
    end_user = f"/projects/{project.slug}/end-users/customer:42"
    assert re.search(rf'<a href="{end_user}/export" download id="pg-export">Export</a>', html)
    assert (f'href="{end_user}?import=open#import" id="pg-import"' in html) == (role in (Role.OWNER, Role.ADMIN))
    page = logged_in(alice).get(f"{end_user}?import=open").content.decode()
    assert '<details class="import" id="import" open>' in page, "the Import it leads to is open"
    nobody = logged_in(person).get(page_url(project) + "?end_user=nobody").content.decode()
    assert 'id="pg-export"' not in nobody, "no memory yet: nothing to export"


def test_a_viewer_posting_memory_add_by_hand_is_refused(alice, project, read_api):
    client = logged_in(member(project, "vera@example.com", Role.VIEWER))
    response = run(client, project, "memory_add", "u_new", **{"items-0-text": "sneaky", "arg-wait": "1"})
    assert response.status_code == 403
    refused = read_api.tool("add", items=[{"text": "sneaky"}]).json()
    assert without_request_id(answer_of(response)) == without_request_id(refused), (
        "the refusal a read key gets over HTTP, in the same words"
    )
    assert refused["error"] == "insufficient_scope"
    assert f"Refused: {refused['message']}" in response.content.decode()
    with scoped(project.pk):
        assert not Item.objects.exists() and not EndUser.objects.filter(external_id="u_new").exists()
    json_way = run(client, project, "memory_add", "u_new", **{"items-json": '[{"text": "sneaky"}]'})
    assert json_way.status_code == 403
    with scoped(project.pk):
        assert not Item.objects.exists()


def test_run_needs_the_csrf_token(alice, project):
    client = logged_in(alice, enforce_csrf_checks=True)
    assert run(client, project, "memory_overview").status_code == 403
    client.get(page_url(project))
    token = client.cookies["csrftoken"].value
    response = run(client, project, "memory_overview", csrfmiddlewaretoken=token)
    assert response.status_code == 200


def test_run_is_post_only(alice, project):
    assert logged_in(alice).get(page_url(project) + "/run").status_code == 405


# --- bad arguments ---------------------------------------------------------------------------------------------


def test_bad_arguments_show_the_field_and_its_bound(alice, project, api):
    api.add({"text": "I moved to Porto."})
    client = logged_in(alice)
    response = run(client, project, "memory_grep", **{"arg-pattern": "Porto", "arg-limit": "500"})
    assert response.status_code == 400
    html = response.content.decode()
    assert (
        '<p class="field-error" id="pg-arg-limit-error" role="alert">'
        f"limit: from 1 to {GREP_LIMIT_MAX} (got a larger number)</p>" in html
    )
    assert re.search(r'name="arg-limit"[^>]*aria-invalid="true"', html)
    assert answer_of(response)["bound"] == GREP_LIMIT_MAX and answer_of(response)["field"] == "limit"
    http = api.tool("grep", pattern="Porto", limit=500)
    shown = without_request_id(json.loads(response.context["result"]["json"]))
    assert json.dumps(shown, indent=2, ensure_ascii=False) == json.dumps(
        without_request_id(http.json()), indent=2, ensure_ascii=False
    ), "the JSON shown is the HTTP route's, key for key"

    too_long = run(client, project, "memory_add", **{"items-0-text": "x" * (ITEM_TEXT_MAX + 1)})
    assert too_long.status_code == 400
    assert f"items[0].text: at most {ITEM_TEXT_MAX:,} characters" in too_long.content.decode()
    assert 'id="pg-items-0-text-error"' in too_long.content.decode()

    bad_day = run(client, project, "memory_latest", **{"arg-after": "last tuesday"})
    assert bad_day.status_code == 400 and 'id="pg-arg-after-error"' in bad_day.content.decode()
    assert "after: not an ISO day (YYYY-MM-DD)" in bad_day.content.decode()

    nothing = run(client, project, "memory_add", **{"items-0-kind": "note"})
    assert nothing.status_code == 400 and "items: 1 to 500 entries (got 0)" in nothing.content.decode()


def test_a_bad_end_user_or_json_is_named_and_nothing_runs(alice, project):
    client = logged_in(alice)
    response = run(client, project, "memory_add", "not an id!", **{"items-0-text": "hello"})
    assert response.status_code == 400 and response.context["result"] is None
    assert "X-Twin-Account may hold only letters" in response.content.decode()
    assert 'id="pg-end-user-error"' in response.content.decode()
    broken = run(client, project, "memory_add", **{"items-json": "[{not json"})
    assert broken.status_code == 400 and "items: not valid JSON" in broken.content.decode()
    assert run(client, project, "memory_forget", **{"arg-all": "1"}).status_code == 400, (
        "HTTP-only tools are not offered"
    )
    with scoped(project.pk):
        assert not Item.objects.exists()


# --- tenancy ---------------------------------------------------------------------------------------------------


def test_the_playground_cannot_reach_another_project(alice, project, charlie, other_project):
    alices, charlies = logged_in(alice), logged_in(charlie)
    assert run(alices, other_project, "memory_overview").status_code == 404
    save(alices, project, "I live in Porto.")
    save(charlies, other_project, "I live in Oslo.")
    assert EndUser.objects.filter(external_id="u_1").count() == 2, "one end user u_1 in each project"
    assert answer_of(run(alices, project, "memory_grep", **{"arg-pattern": "Oslo"}))["found"] == 0
    assert answer_of(run(alices, project, "memory_grep", **{"arg-pattern": "Porto"}))["found"] == 1
    assert answer_of(run(charlies, other_project, "memory_grep", **{"arg-pattern": "Porto"}))["found"] == 0


# --- the answer ------------------------------------------------------------------------------------------------


def test_the_answer_equals_what_the_http_route_answers(alice, project, api):
    api.add(
        {
            "text": "I moved to Porto in 2023. My sister Ana lives in Lisbon.",
            "at": "2023-05-01",
            "author": "Alice Chen",
            "id": "n1",
        }
    )
    client = logged_in(alice)
    path = api.tool("latest").json()["passages"][0]["path"]
    cases: list[tuple[str, dict[str, Any]]] = [
        ("memory_search", {"query": "Where do I live?"}),
        ("memory_search", {"query": "Where do I live?", "after": "2020-01-01"}),
        ("memory_grep", {"pattern": "Lisbon", "limit": 5}),
        ("memory_latest", {"k": 3}),
        ("memory_overview", {}),
        ("memory_ls", {"path": "passages/memory/"}),
        ("memory_read", {"path": path}),
        ("memory_around", {"passage_id": path.split("/", 3)[3].removesuffix(".md"), "width": 1}),
        ("memory_history", {"subject": "Ana"}),
        ("memory_read", {"path": "passages/nowhere.md"}),  # memory holds no answer: 404 on both
    ]
    for name, arguments in cases:
        response = run(client, project, name, **{f"arg-{k}": str(v) for k, v in arguments.items()})
        http = api.tool(name.removeprefix("memory_"), **arguments)
        assert response.context["result"]["status"] == http.status_code, name
        assert without_request_id(answer_of(response)) == without_request_id(http.json()), name


@pytest.mark.django_db(transaction=True, databases=[DEFAULT, OWNER])
def test_a_tool_that_fails_is_shown_as_failed(alice, project, api):
    api.add({"text": "I moved to Porto."})
    # The database loses a table under the tool's feet (only the tables' owner may rename one).
    with connections[OWNER].cursor() as cursor:
        cursor.execute("ALTER TABLE memory_passage RENAME TO memory_passage_gone")
    try:
        response = run(logged_in(alice), project, "memory_grep", **{"arg-pattern": "Porto"})
    finally:
        with connections[OWNER].cursor() as cursor:
            cursor.execute("ALTER TABLE memory_passage_gone RENAME TO memory_passage")
    assert response.context["result"]["status"] == 500
    assert re.search(r'id="pg-status">500\s+failed', response.content.decode())
    assert answer_of(response)["message"].startswith("The tool failed: ")


def test_the_readable_view_links_hits_into_the_memory_view(alice, project, api):
    api.add(
        {"text": "I moved to Porto in 2023. My sister Ana lives in Lisbon.", "at": "2023-05-01", "author": "Alice Chen"}
    )
    response = run(logged_in(alice), project, "memory_search", **{"arg-query": "Where does Ana live?"})
    html = response.content.decode()
    hit = answer_of(response)["hits"][0]["path"]
    memory_view = f"/projects/{project.slug}/end-users/u_1?path={hit.replace('/', '%2F')}"
    assert f'<a href="{memory_view}"><code>{hit}</code></a>' in html
    assert re.search(
        r"<td>Ana</td><td>home_city</td><td><strong>Lisbon</strong></td>\s*"
        r'<td><span class="pg-since">since <time datetime="2023-05-01T00:00:00\+00:00">2023-05-01</time></span>',
        html,
    )
    assert logged_in(alice).get(memory_view).status_code == 200
    history = run(logged_in(alice), project, "memory_history", **{"arg-subject": "Alice Chen"}).content.decode()
    assert "History of Alice Chen" in history and "<strong>Porto</strong>" in history


def test_the_same_call_is_shown_as_curl_and_mcp(alice, project, api):
    api.add({"text": "I moved to Porto."})
    response = run(logged_in(alice), project, "memory_grep", **{"arg-pattern": "it's Porto", "arg-limit": "5"})
    same = response.context["same_call"]
    assert same["curl"] == (
        'curl -s http://testserver/v1/memory/grep -H "Authorization: Bearer $TWIN_MEMORY_API_KEY" '
        "-H 'X-Twin-Account: u_1' -H \"Content-Type: application/json\" "
        '-d \'{"pattern": "it\'"\'"\'s Porto", "limit": 5}\''
    )
    assert json.loads(same["mcp"]) == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "memory_grep", "arguments": {"pattern": "it's Porto", "limit": 5}},
    }
    html = response.content.decode()
    assert 'id="pg-curl"' in html and 'id="pg-mcp"' in html and "http://testserver/v1/mcp" in html


def test_it_remembers_the_last_end_users(alice, project):
    client = logged_in(alice)
    for account in ("u_1", "u_2", "u_1", "u_3"):
        run(client, project, "memory_overview", account)
    html = client.get(page_url(project)).content.decode()
    assert 'id="pg-end-user" value="u_3"' in html
    assert re.findall(r'<option value="(u_\d)">', html) == ["u_3", "u_1", "u_2"]


def test_a_run_counts_as_a_console_call(alice, project, api):
    api.add({"text": "I moved to Porto."})
    run(logged_in(alice), project, "memory_grep", **{"arg-pattern": "Porto"})
    with scoped(project.pk):
        assert UsageDay.objects.filter(project=project, tool="memory_grep", surface="console").exists()


def test_tools_offered_are_the_mcp_tools_of_the_access(alice, project):
    from accounts.auth import Context

    html = logged_in(alice).get(page_url(project)).content.decode()
    assert offered(html) == [t.name for t in mcp_tools(Context(project=project, account="", access="write"))]


def test_the_playground_says_what_became_of_each_saved_item():
    assert item_note({"id": "it_1", "status": "duplicate", "duplicate_of": "it_0"}) == (
        "not stored again: it repeats it_0"
    )
    assert (
        item_note({"id": "a", "status": "added", "redacted": [{"field": "items[0].text", "secret": "Password"}]})
        == "stored with items[0].text (Password) redacted"
    )
    assert item_note({"id": "a", "status": "added"}) == ""


def test_a_tool_name_not_offered_is_refused_without_echo(alice, project):
    response = logged_in(alice).post(
        f"/projects/{project.slug}/playground/run", {"tool": "evil-7f3a<b>", "end_user": "u_1"}
    )
    assert response.status_code == 400 and "No tool by that name" in response.content.decode()
    assert "evil-7f3a" not in response.content.decode()
