"""The main journeys, in a real browser: sign up, make a key, save and search in the playground, see the
passage in the end user's memory, revoke the key; and a Viewer granting a Read only connection."""

import json
import re
import urllib.error
import urllib.request
from urllib.parse import parse_qs, urlsplit

from django.core import mail
from playwright.sync_api import expect

from accounts.models import Connection, Role
from tests.conftest import first_group
from tests.oauth_flow import REDIRECT_URI, authorize_query, member, pkce, registered

from .conftest import shot

END_USER = "u_e2e"


def http(live_server, path: str, body: dict | None = None, *, key: str, account: str = END_USER):
    """A call to the live server over real HTTP, as a customer's backend makes it: (status, JSON)."""
    request = urllib.request.Request(
        live_server.url + path,
        data=json.dumps(body or {}).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {key}", "X-Twin-Account": account, "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def choose_tool(page, name: str):
    """Pick a tool: the picker reloads the page with its form (keeping the end user typed)."""
    # The deferred script hides "Choose" once it listens for a change; a pick made before is lost.
    expect(page.locator("#pg-choose")).to_be_hidden()
    with page.expect_navigation():
        page.select_option("#pg-tool", name)
    expect(page.locator("#pg-run input[name=tool]")).to_have_value(name)


def test_sign_up_make_a_key_save_search_see_the_passage_and_revoke(page, live_server, transactional_db):
    page.goto("/signup")
    page.fill("#id_email", "dana@example.com")
    page.fill("#id_password", "a-long-pass-phrase-7")
    page.fill("#id_project_name", "Dana Labs")
    shot(page, "01-sign-up")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Check your email")
    link = first_group(r"https?://[^/\s]+(/signup/\S+)", mail.outbox[-1].body)
    page.goto(link)
    page.get_by_role("button", name="Create my account").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Dana Labs")
    shot(page, "02-project-overview")
    slug = urlsplit(page.url).path.strip("/").split("/")[1]

    # A read and write key, shown once.
    page.get_by_role("navigation", name="Project").get_by_role("link", name="API keys").click()
    page.fill("#id_name", "backend")
    page.check("#access-write")
    shot(page, "03-keys")
    page.get_by_role("button", name="Create key").click()
    key = page.locator("#new-key").input_value()
    assert key.startswith("tm_")
    shot(page, "04-key-created")

    # The playground: memory_add, then memory_search, for one end user.
    page.get_by_role("navigation", name="Project").get_by_role("link", name="Playground").click()
    expect(page.get_by_role("heading", name="Playground")).to_be_visible()
    page.fill("#pg-end-user", END_USER)
    choose_tool(page, "memory_add")
    expect(page.locator("#pg-end-user")).to_have_value(END_USER)
    page.fill("#pg-items-0-text", "I moved to Porto in 2023. My sister Ana lives in Lisbon.")
    page.fill("#pg-items-0-at", "2023-05-01")
    page.fill("#pg-items-0-author", "Dana")
    page.get_by_role("button", name="Add another item").click()
    page.fill("#pg-items-1-text", "I prefer green tea in the morning.")
    page.check("#pg-arg-wait")
    page.get_by_role("button", name="Run").click()
    expect(page.locator("#pg-status")).to_contain_text("200 OK")
    expect(page.locator("#pg-readable .pg-items li")).to_have_count(2)
    expect(page.locator("#pg-curl")).to_contain_text('/v1/memory/add -H "Authorization: Bearer $TWIN_MEMORY_API_KEY"')
    shot(page, "05-playground-add")

    choose_tool(page, "memory_search")
    page.fill("#pg-arg-query", "Where does my sister live?")
    page.get_by_role("button", name="Run").click()
    expect(page.locator("#pg-status")).to_contain_text("200 OK")
    hit = page.locator("#pg-readable .pg-hit").first
    expect(hit).to_contain_text("My sister Ana lives in Lisbon.")
    expect(page.locator("#pg-readable .pg-facts")).to_contain_text("Lisbon")
    shot(page, "06-playground-search")
    page.locator("#pg-readable .pg-hits li").first.scroll_into_view_if_needed()

    # The key answers the same search over HTTP, as the curl line beside the answer says.
    status, answer = http(live_server, "/v1/memory/search", {"query": "Where does my sister live?"}, key=key)
    assert status == 200 and "Lisbon" in answer["hits"][0]["text"]

    # The hit's path opens the passage in the end user's memory.
    path = hit.locator("a code").inner_text()
    hit.get_by_role("link").click()
    expect(page).to_have_url(re.compile(rf"/projects/{slug}/end-users/{END_USER}\?path="))
    expect(page.locator("main")).to_contain_text("My sister Ana lives in Lisbon.")
    expect(page.locator("main")).to_contain_text(path.rsplit("/", 1)[1])
    shot(page, "07-end-user-memory")
    page.get_by_role("navigation", name="Project").get_by_role("link", name="End users").click()
    expect(page.locator("main")).to_contain_text(END_USER)
    shot(page, "08-end-users")

    # Revoke: the key stops working on its next use.
    page.get_by_role("navigation", name="Project").get_by_role("link", name="API keys").click()
    page.get_by_role("link", name=re.compile("^Revoke")).first.click()
    shot(page, "09-key-revoke")
    page.get_by_role("button", name="Revoke the key").click()
    expect(page.locator("main")).to_contain_text("it no longer works")
    shot(page, "10-key-revoked")
    status, answer = http(live_server, "/v1/memory/search", {"query": "sister"}, key=key)
    assert status == 401 and answer["error"] == "revoked_key"


def start_sign_in(page, live_server, email: str):
    """An app (registered here) sends the person to the consent card; they log in on the way.
    Returns (app, code_verifier, resource)."""
    app = registered(client_name="Claude")
    verifier, challenge = pkce()
    resource = f"{live_server.url}/v1/mcp"
    page.goto(authorize_query(app, challenge, resource=resource))
    expect(page).to_have_url(re.compile(r"/login\?next="))
    page.fill("#id_username", email)
    page.fill("#id_password", f"{email.split('@')[0]}-password-1")
    shot(page, "11-log-in")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Claude wants to use your twin memory")
    return app, verifier, resource


def test_a_viewer_grants_a_read_only_connection(page, live_server, project):
    member(project, "vera@example.com", Role.VIEWER)
    app, verifier, resource = start_sign_in(page, live_server, "vera@example.com")
    card = page.locator("#consent-form")
    expect(card.get_by_label("Read only")).to_be_enabled()
    write = card.get_by_label("Read and save")
    assert write.count() == 0 or write.is_disabled(), "a Viewer can choose only Read only"
    card.get_by_label("Read only").check()
    shot(page, "12-consent-viewer")
    # Allow sends the browser to the app's callback, on another site: the browser resolves no outside name
    # (see ARGS), so the request is seen and read here, and goes nowhere.
    with page.expect_request(lambda request: request.url.startswith(REDIRECT_URI)) as sent:
        card.get_by_role("button", name="Allow").click()
    code = parse_qs(urlsplit(sent.value.url).query)["code"][0]
    # That navigation ends on the browser's error page; a navigation started before it lands is interrupted.
    page.wait_for_url("chrome-error://chromewebdata/")

    connection = Connection.objects.get()
    assert connection.access == "read" and connection.user.email == "vera@example.com"
    token = _exchange(live_server, app, code, verifier, resource)
    assert token["scope"] == "memory:read"
    tools = _mcp(live_server, token["access_token"], "tools/list")["result"]["tools"]
    assert "memory_add" not in [t["name"] for t in tools] and len(tools) == 8

    page.goto("/account/apps")
    expect(page.locator("main")).to_contain_text("Read only")
    shot(page, "13-connected-apps")


def _exchange(live_server, app, code, verifier, resource) -> dict:
    from urllib.parse import urlencode

    body = urlencode(
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "client_id": app["client_id"],
            "code_verifier": verifier,
            "resource": resource,
        }
    ).encode()
    request = urllib.request.Request(
        live_server.url + "/oauth/token",
        data=body,
        method="POST",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def _mcp(live_server, access_token: str, method: str) -> dict:
    request = urllib.request.Request(
        live_server.url + "/v1/mcp",
        method="POST",
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": method}).encode(),
        headers={
            "Authorization": f"Bearer {access_token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())
