"""/v1/mcp driven by the official MCP Python SDK's Streamable HTTP client: a client we did not write.

The SDK runs in its own process (tests/sdk/mcp_client.py), an async client beside the server. The server is
pytest-django's live_server; Celery runs eagerly, so memory_add's background read happens inside the live
server thread. The v2 `Client` in its default mode probes `server/discover` and speaks 2026-07-28; the same
`Client` in legacy mode and the v1 `ClientSession` still initialize and speak the wire document's newest
revision.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_server.era import MODERN
from mcp_server.instructions import SAVE_ALMOST_EVERYTHING, SEARCH_FIRST
from mcp_server.protocol import LATEST, SERVER_INFO

SCRIPT = Path(__file__).resolve().parents[1] / "sdk" / "mcp_client.py"
PHRASE = "Sapphire Heron"
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
TIMEOUT_SECONDS = 60


@pytest.fixture
def sdk(live_server):
    """Run the SDK client script against the live server; returns the one JSON line it printed."""

    def run(key: str, mode: str, *extra: str, account: str = "u_1") -> dict:
        done = subprocess.run(
            [sys.executable, str(SCRIPT), f"{live_server.url}/v1/mcp", key, account, mode, *extra],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
        )
        lines = done.stdout.strip().splitlines()
        assert lines, f"the SDK client printed nothing (exit {done.returncode}):\n{done.stderr[-3000:]}"
        seen = json.loads(lines[-1])
        assert seen["ok"], f"{seen['error']}\n{seen.get('traceback', '')[-3000:]}\n{done.stderr[-2000:]}"
        return seen

    return run


def assert_one_message_a_post_and_no_session(seen, negotiated):
    exchanges = seen["exchanges"]
    assert all(e["http"] == "POST" for e in exchanges), "no GET stream and no DELETE: no session was minted"
    assert not any(e["session_id"] for e in exchanges)
    assert not any(e["origin"] for e in exchanges)
    start = next(i for i, e in enumerate(exchanges) if e["method"] == "initialize")
    # initialize is the negotiation: it carries no leftover version header (not even the probe's).
    assert exchanges[start]["protocol_version"] is None
    assert exchanges[start]["status"] == 200
    after = exchanges[start + 1 :]
    assert after[0]["method"] == "notifications/initialized" and after[0]["status"] == 202
    for exchange in after:
        assert exchange["protocol_version"] == negotiated, exchange
        assert exchange["status"] in (200, 202), exchange
        assert "error_code" not in exchange, exchange


def assert_it_added_and_found_the_phrase(seen):
    assert seen["add"]["is_error"] is False
    added = json.loads(seen["add"]["text"])
    assert added["searchable"] is True
    assert [(i["id"], i["status"], i["searchable"]) for i in added["items"]] == [
        ("sdk-interop-1", "added", True),
        ("sdk-interop-2", "added", True),
    ]
    assert seen["grep"]["is_error"] is False
    grep = json.loads(seen["grep"]["text"])
    assert grep["pattern"] == PHRASE and grep["found"] == 1
    [hit] = grep["hits"]
    assert PHRASE in hit["text"] and PHRASE in hit["match"]
    assert hit["item_ids"] == ["sdk-interop-1"]
    assert hit["path"].startswith("passages/") and hit["passage_id"]


def assert_it_read_resources_completed_and_got_a_prompt(seen):
    passages = [uri for uri in seen["resources"] if uri.startswith("twin-memory://passages/")]
    assert seen["resources"][0] == "twin-memory://index.md" and len(passages) == 2
    assert all(seen["resource_texts"][uri] for uri in seen["resources"]), "every resource read"
    assert any(PHRASE in text for uri in passages for text in seen["resource_texts"][uri])
    assert seen["templates"] == ["twin-memory://passages/{+path}", "twin-memory://subjects/{subject}.md"]
    assert sorted(seen["completion"]) == sorted(uri.removeprefix("twin-memory://passages/") for uri in passages)
    assert seen["prompts"] == ["recall", "remember", "catch_up", "forget_about"]
    assert "my favourite tram" in seen["prompt_text"] and "memory_search" in seen["prompt_text"]


def test_the_v2_client_discovers_2026_07_28_and_calls_every_tool(sdk, write_key):
    seen = sdk(write_key[1], "v2", "--phrase", PHRASE)

    assert seen["discovered"] is True and seen["protocol_version"] == MODERN
    assert seen["discover_result"]["supportedVersions"][0] == MODERN
    assert seen["server_info"] == SERVER_INFO
    assert seen["capabilities"]["tools"] == {"listChanged": False}
    assert seen["instructions"] == SEARCH_FIRST + "\n\n" + SAVE_ALMOST_EVERYTHING
    assert seen["tools"] == [*READ_TOOLS, "memory_add"]
    assert_it_added_and_found_the_phrase(seen)
    called = seen["every_tool"]
    assert sorted([*called, "memory_grep"]) == sorted(READ_TOOLS), "every tool called"
    for name in ("memory_search", "memory_read", "memory_ls", "memory_around", "memory_latest", "memory_overview"):
        assert called[name]["is_error"] is False, (name, called[name])
    assert PHRASE in called["memory_read"]["text"]
    assert_it_read_resources_completed_and_got_a_prompt(seen)

    exchanges = seen["exchanges"]
    assert exchanges[0]["method"] == "server/discover" and exchanges[0]["status"] == 200
    assert not any(e["method"] == "initialize" for e in exchanges), "no handshake in the new era"
    for exchange in exchanges:
        assert exchange["http"] == "POST" and exchange["status"] == 200, exchange
        assert exchange["protocol_version"] == MODERN and exchange["mcp_method"] == exchange["method"], exchange
        assert not exchange["session_id"] and "error_code" not in exchange, exchange
    calls = [e for e in exchanges if e["method"] == "tools/call"]
    assert len(calls) == len(READ_TOOLS) + 1 and all(e["mcp_name"] for e in calls)


@pytest.mark.parametrize("mode", ["legacy", "v1"])
def test_it_initializes_lists_adds_and_greps(sdk, write_key, mode):
    seen = sdk(write_key[1], mode, "--phrase", PHRASE)

    assert seen["server_info"]["name"] == SERVER_INFO["name"]
    assert seen["server_info"]["version"] == SERVER_INFO["version"]
    assert seen["protocol_version"] == LATEST
    assert seen["capabilities"]["tools"] == {"listChanged": False}
    assert seen["instructions"].startswith(SEARCH_FIRST)
    assert SAVE_ALMOST_EVERYTHING in seen["instructions"]

    assert seen["tools"] == [*READ_TOOLS, "memory_add"]
    assert all(seen["read_only_hints"][name] is True for name in READ_TOOLS)
    assert seen["read_only_hints"]["memory_add"] is False

    assert_it_added_and_found_the_phrase(seen)
    assert len(seen["every_tool"]) == len(READ_TOOLS) - 1, "every other tool called too"
    assert_it_read_resources_completed_and_got_a_prompt(seen)
    assert not any(e["method"] == "server/discover" for e in seen["exchanges"]), "no probe: the old era"

    assert_one_message_a_post_and_no_session(seen, LATEST)


@pytest.mark.parametrize("mode", ["v2", "legacy"])
def test_a_read_key_lists_no_memory_add(sdk, read_key, mode):
    seen = sdk(read_key[1], mode, "--read-only")

    assert seen["tools"] == READ_TOOLS
    assert seen["instructions"] == SEARCH_FIRST, "no save policy for a key that cannot save"
