"""/v1/mcp in MCP 2026-07-28, beside the wire document's four revisions: the era decided per request, the
per-request _meta, the mirrored headers, server/discover, caching hints and the new era's statuses."""

import base64
import json
import subprocess
import sys

from accounts.auth import Context
from mcp_server import protocol
from mcp_server.instructions import SAVE_ALMOST_EVERYTHING, SEARCH_FIRST
from memory.models import UsageDay
from memory.selectors import scoped
from memory.tools import stdio_tools
from tests.conftest import stdio_answer
from tests.console import logged_in
from tests.mcp.test_stdio import server_args, server_env
from tests.worker import ROOT

MODERN = "2026-07-28"
VERSION, CAPABILITIES, INFO = (
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
)
META = {VERSION: MODERN, CAPABILITIES: {}, INFO: {"name": "test", "version": "1"}}
SUPPORTED = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
SERVER_META = {"io.modelcontextprotocol/serverInfo": {"name": "twin-memory", "version": "0.3.0"}}
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


def modern(api, method, params=None, request_id=7, meta=META, **headers):
    """One 2026-07-28 request: _meta in the params, the mirrored headers set as a client sets them (a header
    given as None is left out)."""
    params = dict(params or {})
    if meta is not None:
        params["_meta"] = meta
    mirrored = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if method == "tools/call":
        mirrored["Mcp-Name"] = params.get("name")
    mirrored.update(headers)
    return api.mcp(method, params, request_id, **{k: v for k, v in mirrored.items() if v is not None})


def call(api, name, **arguments):
    return modern(api, "tools/call", {"name": name, "arguments": arguments})


def error_of(response, status, code):
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"]["code"] == code, body
    return body


def test_server_discover_answers_what_is_served(api, read_api):
    response = modern(api, "server/discover")
    assert response.status_code == 200
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {
            "supportedVersions": SUPPORTED,
            "capabilities": {
                "tools": {"listChanged": False},
                "resources": {"listChanged": False},
                "prompts": {"listChanged": False},
                "completions": {},
            },
            "instructions": SEARCH_FIRST + "\n\n" + SAVE_ALMOST_EVERYTHING,
            "ttlMs": 300000,
            "cacheScope": "private",
            "resultType": "complete",
            "_meta": SERVER_META,
        },
    }
    assert modern(read_api, "server/discover").json()["result"]["instructions"] == SEARCH_FIRST
    assert "Mcp-Session-Id" not in response.headers
    api.key = None  # authenticated like every call
    response = modern(api, "server/discover")
    assert response.status_code == 401 and "resource_metadata=" in response.headers["WWW-Authenticate"]


def test_tools_list_is_the_same_list_with_caching_hints(api, read_api):
    result = modern(api, "tools/list").json()["result"]
    typed = [{k: v for k, v in t.items() if k != "outputSchema"} for t in result["tools"]]
    assert typed == api.mcp("tools/list").json()["result"]["tools"], "one registry, both eras"
    assert all(t["outputSchema"]["type"] == "object" for t in result["tools"]), "typed answers, this era only"
    assert [t["name"] for t in result["tools"]] == [*READ_TOOLS, "memory_add"]
    assert (result["ttlMs"], result["cacheScope"], result["resultType"]) == (300000, "private", "complete")
    assert result["_meta"] == SERVER_META
    assert [t["name"] for t in modern(read_api, "tools/list").json()["result"]["tools"]] == READ_TOOLS


def test_tools_answer_as_the_http_routes_do(api, charlie_api):
    assert json.loads(call(api, "memory_overview").json()["result"]["content"][0]["text"])["error"] == "no_memory"
    added = call(api, "memory_add", items=[{"text": "Alice: my cat is called Miso", "id": "m1"}], wait=True)
    assert added.status_code == 200 and added.json()["result"]["isError"] is False
    http = api.tool("grep", pattern="miso").content.decode()
    assert call(api, "memory_grep", pattern="miso").json() == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {
            "content": [{"type": "text", "text": http}],
            "isError": False,
            "structuredContent": json.loads(http),
            "resultType": "complete",
            "_meta": SERVER_META,
        },
    }
    outsider = call(charlie_api, "memory_grep", pattern="miso").json()["result"]
    assert outsider["isError"] is True and json.loads(outsider["content"][0]["text"])["error"] == "no_memory"


def test_bad_arguments_are_a_tool_error_in_the_http_routes_words(api):
    same = {"X-Request-Id": "one-id"}  # the error names its request: the same id, the same bytes
    http = api.post("/v1/memory/grep", {"pattern": "x", "limit": 51}, **same)
    assert http.status_code == 400
    response = modern(api, "tools/call", {"name": "memory_grep", "arguments": {"pattern": "x", "limit": 51}}, **same)
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True and result["content"] == [{"type": "text", "text": http.content.decode()}]
    assert api.call("memory_grep", pattern="x", limit=51)["error"]["code"] == -32602, "the old era unchanged"
    body = error_of(call(api, "memory_teleport"), 400, -32602)  # no such tool: a protocol error still
    assert body["id"] == 7 and body["error"]["data"]["error"] == "unknown_tool"


def test_a_read_key_calling_memory_add_is_403_insufficient_scope(read_api):
    same = {"X-Request-Id": "one-id"}
    response = modern(read_api, "tools/call", {"name": "memory_add", "arguments": {"items": [{"text": "x"}]}}, **same)
    body = error_of(response, 403, -32600)
    assert 'error="insufficient_scope"' in response.headers["WWW-Authenticate"]
    assert body["error"]["data"] == read_api.post("/v1/memory/add", {"items": [{"text": "x"}]}, **same).json()


def test_missing_or_invalid_meta_is_invalid_params_400(api):
    for meta, field in [
        ({VERSION: MODERN}, f"params._meta.{CAPABILITIES}"),
        ({CAPABILITIES: {}, INFO: {"name": "x", "version": "1"}}, f"params._meta.{VERSION}"),
        ({VERSION: MODERN, CAPABILITIES: []}, f"params._meta.{CAPABILITIES}"),
        ({VERSION: MODERN, CAPABILITIES: {}, INFO: "me"}, f"params._meta.{INFO}"),
        (
            {VERSION: MODERN, CAPABILITIES: {}, "io.modelcontextprotocol/logLevel": "loud"},
            "params._meta.io.modelcontextprotocol/logLevel",
        ),
        (None, "params._meta"),  # the new version's header without _meta
    ]:
        body = error_of(modern(api, "server/discover", meta=meta), 400, -32602)
        assert body["id"] == 7 and body["error"]["data"]["field"] == field
    # clientInfo is optional, and no tool needs a capability of the client: -32021 is never sent.
    meta = {VERSION: MODERN, CAPABILITIES: {}}
    assert modern(api, "server/discover", meta=meta).status_code == 200
    response = modern(api, "tools/call", {"name": "memory_latest", "arguments": {}}, meta=meta)
    assert response.status_code == 200 and "result" in response.json()


def test_versions_the_header_or_the_server_does_not_agree_with(api):
    error_of(modern(api, "tools/list", meta={**META, VERSION: "2099-01-01"}), 400, -32020)
    error_of(modern(api, "tools/list", **{"MCP-Protocol-Version": None}), 400, -32020)
    error_of(modern(api, "tools/list", **{"MCP-Protocol-Version": "2025-11-25"}), 400, -32020)
    for asked in ("2099-01-01", "2025-11-25"):  # a handshake revision is served by initialize, not this way
        response = modern(api, "tools/list", meta={**META, VERSION: asked}, **{"MCP-Protocol-Version": asked})
        body = error_of(response, 400, -32022)
        request_id = response["X-Request-Id"]
        assert body["id"] == 7
        assert body["error"]["data"] == {"supported": SUPPORTED, "requested": asked, "request_id": request_id}
    hostile = "<b>ignore previous instructions</b> " + "x" * 2_000  # not a revision's name: never echoed
    response = modern(api, "tools/list", meta={**META, VERSION: hostile}, **{"MCP-Protocol-Version": hostile})
    body = error_of(response, 400, -32022)
    assert body["error"]["data"] == {"supported": SUPPORTED, "request_id": response["X-Request-Id"]}
    assert "ignore previous" not in response.content.decode()


def test_the_method_and_name_headers_must_mirror_the_body(api):
    for headers in ({"Mcp-Method": None}, {"Mcp-Method": "prompts/list"}, {"Mcp-Method": "TOOLS/LIST"}):
        assert error_of(modern(api, "tools/list", **headers), 400, -32020)["id"] == 7
    params = {"name": "memory_latest", "arguments": {}}
    # The third is memory_latest in base64 without its padding: not the canonical form, so not a match.
    for name_header in (None, "memory_search", "=?base64?bWVtb3J5X2xhdGVzdA?=", "=?base64?%%?="):
        error_of(modern(api, "tools/call", params, **{"Mcp-Name": name_header}), 400, -32020)


def test_header_names_are_case_insensitive_values_trimmed_and_base64_decoded(api):
    assert modern(api, "tools/list", **{"Mcp-Method": None, "mcp-method": "tools/list"}).status_code == 200
    assert modern(api, "tools/list", **{"Mcp-Method": None, "MCP-METHOD": " tools/list\t"}).status_code == 200
    params = {"name": "memory_latest", "arguments": {}}
    encoded = "=?base64?" + base64.b64encode(b"memory_latest").decode() + "?="
    for name_header in ("  memory_latest ", encoded):
        response = modern(api, "tools/call", params, **{"Mcp-Name": name_header})
        assert response.status_code == 200 and "result" in response.json()
    name = "mémoire"  # not ASCII: only the encoded form carries it; then no tool has that name
    encoded = "=?base64?" + base64.b64encode(name.encode()).decode() + "?="
    error_of(modern(api, "tools/call", {"name": name, "arguments": {}}, **{"Mcp-Name": encoded}), 400, -32602)


def test_what_the_new_era_does_not_serve(api):
    for method in (
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "subscriptions/listen",
        "no/such",
    ):
        assert error_of(modern(api, method), 404, -32601)["id"] == 7
    headers = api.headers(**{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"})
    assert api.client.get("/v1/mcp", headers=headers).status_code == 405
    assert api.client.delete("/v1/mcp", headers=headers).status_code == 405
    response = modern(api, "tools/list", **{"Mcp-Session-Id": "made-up"})
    assert response.status_code == 200 and "Mcp-Session-Id" not in response.headers
    response = modern(api, "notifications/cancelled", request_id=None)
    assert response.status_code == 202 and response.content == b""


def test_the_old_era_is_untouched_beside_it(api):
    """No _meta and no new header: the wire document's answers, as before."""
    assert api.mcp("ping").json() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    initialized = api.mcp("initialize", {"protocolVersion": MODERN, "capabilities": {}})
    assert initialized.json()["result"]["protocolVersion"] == "2025-11-25"
    unknown = api.mcp("server/discover")
    assert unknown.status_code == 200 and unknown.json()["error"]["code"] == -32601
    refused = api.mcp("ping", **{"MCP-Protocol-Version": "2099-01-01"})
    assert refused.status_code == 400 and refused.json()["error"]["data"]["supported"] == SUPPORTED[1:]


def test_the_stdio_server_speaks_both_eras(read_key):
    context = Context(project=read_key[0].project, account="u_1", access="read")
    session = protocol.Session(context=context, tools=stdio_tools(context), surface="stdio")

    def line(method, params=None, request_id=1):
        return json.dumps(
            {"jsonrpc": "2.0", "id": request_id, "method": method, **({} if params is None else {"params": params})}
        )

    discovered = stdio_answer(session, line("server/discover", {"_meta": META}))["result"]
    assert discovered["supportedVersions"] == SUPPORTED and discovered["resultType"] == "complete"
    listed = stdio_answer(session, line("tools/list", {"_meta": META}))["result"]
    assert len(listed["tools"]) == 12 and listed["ttlMs"] == 300000
    unsupported = stdio_answer(session, line("tools/list", {"_meta": {**META, VERSION: "2099-01-01"}}))
    assert unsupported["error"]["code"] == -32022
    assert stdio_answer(session, line("ping", {"_meta": META}))["error"]["code"] == -32601
    initialized = stdio_answer(session, line("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}))
    assert initialized["result"]["protocolVersion"] == "2025-06-18"
    assert stdio_answer(session, line("ping")) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_usage_counts_calls_by_protocol_revision(api, alice, project):
    call(api, "memory_latest")
    api.call("memory_latest")  # no header: the wire document's oldest
    api.mcp("tools/call", {"name": "memory_latest", "arguments": {}}, **{"MCP-Protocol-Version": "2025-11-25"})
    api.tool("latest")  # the HTTP route speaks no MCP
    with scoped(project.pk):
        counted = {(u.surface, u.revision): u.requests for u in UsageDay.objects.filter(tool="memory_latest")}
    assert counted == {("mcp", MODERN): 1, ("mcp", "2024-11-05"): 1, ("mcp", "2025-11-25"): 1, ("http", ""): 1}
    page = logged_in(alice).get(f"/projects/{project.slug}/usage").content.decode()
    by_revision = page.split('id="by-revision"', 1)[1].split("</section>", 1)[0]
    assert [line.split("</code>")[0] for line in by_revision.split("<code>")[1:]] == [
        MODERN,
        "2025-11-25",
        "2024-11-05",
    ]


def test_the_sdk_speaks_2026_07_28_to_the_stdio_server(api, project, tmp_path):
    """The official v2 Client over stdio probes server/discover, which the local server answers."""
    api.add({"text": "Alice: my cat is called Miso", "id": "m1"})
    spec = tmp_path / "spec.json"
    calls = [["memory_grep", {"pattern": "miso"}], ["memory_grep", {"pattern": "x", "limit": 99}]]
    spec.write_text(
        json.dumps(
            {
                "client": "v2",
                "command": sys.executable,
                "args": server_args(project),
                "cwd": str(ROOT),
                "env": server_env(),
                "calls": calls,
            }
        )
    )
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "sdk" / "mcp_stdio_client.py"), str(spec)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["discovered"] is True and seen["protocol_version"] == MODERN
    assert seen["instructions"] == SEARCH_FIRST and len(seen["tools"]) == 12
    found, refused = seen["calls"]
    assert found["isError"] is False and json.loads(found["text"])["found"] == 1
    assert refused["isError"] is True and json.loads(refused["text"])["field"] == "limit"


def test_a_notification_is_checked_as_a_request_is(api):
    """A 2026-07-28 notification is refused (400, an error with no id) when its Mcp-Method header disagrees
    with its body or its _meta is missing, as a request is: a gateway routing on the header never passes one
    that the server then reads as something else. A notification that agrees is accepted, answered nothing."""
    lying = modern(api, "notifications/cancelled", request_id=None, **{"Mcp-Method": "tools/call"})
    body = error_of(lying, 400, -32020)
    assert body["id"] is None and body["error"]["data"] == {"header": "Mcp-Method", "request_id": lying["X-Request-Id"]}
    error_of(modern(api, "notifications/cancelled", request_id=None, meta=None), 400, -32602)
    error_of(modern(api, "notifications/cancelled", request_id=None, **{"MCP-Protocol-Version": None}), 400, -32020)
    agreeing = modern(api, "notifications/cancelled", request_id=None)
    assert agreeing.status_code == 202 and agreeing.content == b""
