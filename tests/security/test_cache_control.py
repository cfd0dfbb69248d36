"""Every /v1/ answer says Cache-Control: no-store (it holds a person's memory or an answer to a credential,
which no cache may keep or share): results, errors, 401s, 429s, the middleware's refusals and the export's
stream alike. The one exception is a 2026-07-28 list result, which says in its header what its ttlMs and
cacheScope say in its body."""

import json

from accounts.services import project_set_rate_limits
from tests.conftest import Api
from tests.mcp.test_mcp_2026 import modern

NO_STORE = "no-store"


def test_every_memory_route_answer_says_no_store(api, project):
    added = api.tool("add", items=[{"text": "I moved to Porto in 2023.", "id": "home"}], wait=False)
    assert added.status_code == 200 and added["Cache-Control"] == NO_STORE
    refused = api.tool("add", items=[])
    assert refused.status_code == 400 and refused["Cache-Control"] == NO_STORE
    anonymous = Api(None, "u_1").tool("ls")
    assert anonymous.status_code == 401 and anonymous["Cache-Control"] == NO_STORE
    export = api.post("/v1/memory/export", {})
    assert export.status_code == 200 and export["Cache-Control"] == NO_STORE
    b"".join(export.streaming_content)
    too_big = api.client.post(
        "/v1/memory/search", data="{}", content_type="application/json", headers=api.headers(), CONTENT_LENGTH="abc"
    )
    assert too_big.status_code == 400 and too_big["Cache-Control"] == NO_STORE
    assert api.get("/v1/me")["Cache-Control"] == NO_STORE
    project_set_rate_limits(project=project, per_credential=None, per_end_user=1)
    api.tool("ls")
    limited = api.tool("ls")
    assert limited.status_code == 429 and limited["Cache-Control"] == NO_STORE


def test_mcp_answers_say_no_store_but_a_list_says_what_its_ttl_says(api):
    listed = modern(api, "tools/list")
    result = listed.json()["result"]
    assert (result["ttlMs"], result["cacheScope"]) == (300_000, "private")
    assert listed["Cache-Control"] == "private, max-age=300"
    called = modern(api, "tools/call", {"name": "memory_ls", "arguments": {}})
    assert called.status_code == 200 and called["Cache-Control"] == NO_STORE
    for response in (
        api.mcp("tools/list"),  # the handshake era's list says nothing of how long to keep it
        api.mcp("tools/call", {"name": "memory_ls", "arguments": {}}),
        api.mcp("no/such"),
        Api(None, None).mcp("tools/list"),
        api.client.post("/v1/mcp", data=json.dumps([]), content_type="application/json", headers=api.headers()),
    ):
        assert response["Cache-Control"] == NO_STORE, response.content
