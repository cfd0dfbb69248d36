"""The local stdio server: the same dispatch and registry as /v1/mcp, driven by the official SDK's stdio client."""

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from django.conf import settings

from memory.tools import SAVE_POLICY
from tests.worker import ROOT

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
LOCAL_TOOLS = ["memory_recall", "memory_lessons", "memory_how_they_work", "memory_next"]


def server_env(*, kind: str | None = None) -> dict:
    """The environment the server starts in: the test database, and no process kind unless `kind` names one
    (manage.py names the stdio server's itself, as a client's config leaves it out)."""
    env = {"TWIN_DB_NAME": settings.DATABASES["default"]["NAME"], "PYTHONUNBUFFERED": "1"}
    if kind:
        env["TWIN_PROCESS"] = kind
    for name in ("DATABASE_URL", "TWIN_VAR_DIR", "REDIS_URL", "PATH", "HOME"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


def server_args(project, *extra):
    return ["manage.py", "mcp", "--account", "u_1", "--project", project.slug, *extra]


def sdk(tmp_path, project, calls, *extra) -> dict:
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "command": sys.executable,
                "args": server_args(project, *extra),
                "cwd": str(ROOT),
                "env": server_env(),
                "calls": calls,
            }
        )
    )
    result = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "sdk" / "mcp_stdio_client.py"), str(spec)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert answer["ok"], answer
    return answer


def raw(project, lines: list[str], *extra) -> list[dict]:
    """Lines straight into the server's stdin; its stdout, parsed (every line must be JSON-RPC)."""
    result = subprocess.run(
        [sys.executable, *server_args(project, *extra)],
        cwd=ROOT,
        env=server_env(),
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.fixture
def seeded(api):
    api.add(
        {
            "text": "Alice: I adopted a cat called Miso.",
            "kind": "message",
            "session": "s1",
            "author": "Alice",
            "id": "m1",
            "at": "2026-03-01T10:00:00",
        },
        {
            "text": "Bob: What colour is Miso?",
            "kind": "message",
            "session": "s1",
            "author": "Bob",
            "id": "m2",
            "at": "2026-03-01T10:01:00",
        },
    )
    return api


def test_without_writes_it_lists_the_read_and_local_tools(seeded, project, tmp_path):
    answer = sdk(tmp_path, project, [])
    assert answer["tools"] == READ_TOOLS + LOCAL_TOOLS
    assert "Save almost everything" not in answer["instructions"]
    assert all(a["readOnlyHint"] for a in answer["annotations"].values())


def test_with_writes_it_adds_memory_add_and_the_save_policy(seeded, project, tmp_path):
    answer = sdk(
        tmp_path,
        project,
        [
            ["memory_add", {"items": [{"text": "Prefers window seats", "id": "seat"}], "wait": True}],
            ["memory_grep", {"pattern": "window seats"}],
        ],
        "--writes",
    )
    assert answer["tools"] == READ_TOOLS + LOCAL_TOOLS + ["memory_add"]
    assert "Save almost everything" in answer["instructions"]
    add, grep = answer["calls"]
    assert json.loads(add["text"])["items"] == [{"id": "seat", "status": "added", "searchable": True}]
    assert json.loads(grep["text"])["hits"][0]["item_ids"] == ["seat"]


def test_the_read_tools_answer_as_over_http(seeded, project, tmp_path):
    passage = seeded.tool("grep", pattern="Miso.").json()["hits"][0]
    calls: list[list[Any]] = [
        ["memory_search", {"query": "cat's name"}],
        ["memory_grep", {"pattern": "miso"}],
        ["memory_read", {"path": passage["path"]}],
        ["memory_ls", {}],
        ["memory_around", {"passage_id": passage["passage_id"]}],
        ["memory_history", {"subject": "Alice"}],
        ["memory_latest", {"k": 1}],
        ["memory_overview", {}],
    ]
    answer = sdk(tmp_path, project, calls)
    for (name, arguments), call in zip(calls, answer["calls"], strict=True):
        http = seeded.tool(name.removeprefix("memory_"), **arguments)
        assert call["isError"] == (http.status_code == 404), name
        if name not in ("memory_search",):  # search scores may differ in the last digit across processes
            assert json.loads(call["text"]) == http.json(), name
    assert json.loads(answer["calls"][0]["text"])["hits"][0]["item_ids"] == ["m1"]


def test_it_speaks_line_delimited_json_rpc_and_refuses_what_it_should(seeded, read_api, project):
    missing = "passages/memory/notes/café.md"
    out = raw(
        project,
        [
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            "not json",
            json.dumps([{"jsonrpc": "2.0", "id": 2, "method": "ping"}]),
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {"name": "memory_add", "arguments": {"items": [{"text": "x"}]}},
                }
            ),
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 4,
                    "method": "tools/call",
                    "params": {"name": "memory_grep", "arguments": {"pattern": "x", "limit": 99}},
                }
            ),
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "tools/call",
                    "params": {"name": "memory_read", "arguments": {"path": missing}},
                }
            ),
        ],
    )
    assert out[0] == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert [o["error"]["code"] for o in out[1:5]] == [-32700, -32600, -32600, -32602]
    refused = read_api.tool("add", items=[{"text": "x"}])
    over_http = {name: value for name, value in refused.json().items() if name != "request_id"}  # stdio has none
    assert out[3]["error"]["data"] == over_http, "refused in the HTTP route's words"
    assert out[3]["error"]["message"] == refused.json()["message"]
    not_found = {
        name: value for name, value in seeded.tool("read", path=missing).json().items() if name != "request_id"
    }
    assert out[5]["result"]["isError"] is True and json.loads(out[5]["result"]["content"][0]["text"]) == not_found
    assert len(out) == 6  # the notification got no answer


def test_add_descriptions_match_the_hosted_server(seeded, project):
    [listed] = raw(project, [json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})], "--writes")
    hosted = seeded.mcp("tools/list").json()["result"]["tools"]
    local = {t["name"]: t for t in listed["result"]["tools"]}
    for tool in hosted:
        assert local[tool["name"]] == tool
    assert local["memory_add"]["description"] == SAVE_POLICY


def test_it_needs_a_usable_account_and_project(project):
    bad = subprocess.run(
        [sys.executable, "manage.py", "mcp", "--account", "no spaces"],
        cwd=ROOT,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=60,
        input="",
    )
    assert bad.returncode != 0 and "X-Twin-Account" in bad.stderr
    missing = subprocess.run(
        [sys.executable, "manage.py", "mcp", "--account", "u_1", "--project", "nope"],
        cwd=ROOT,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=60,
        input="",
    )
    assert missing.returncode != 0 and "No project" in missing.stderr


def test_manage_py_names_the_stdio_kind_itself_and_the_server_reads_what_it_saves(project):
    env = server_env()
    assert "TWIN_PROCESS" not in env
    initialize = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
    add = {"items": [{"text": "Prefers aisle seats on night trains", "id": "seat"}], "wait": True}
    out = raw(
        project,
        [
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}),
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json.dumps(
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_add", "arguments": add}}
            ),
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {"name": "memory_grep", "arguments": {"pattern": "aisle seats"}},
                }
            ),
        ],
        "--writes",
    )
    assert [o["id"] for o in out] == [1, 2, 3]
    assert out[0]["result"]["protocolVersion"] == "2025-11-25"
    added = json.loads(out[1]["result"]["content"][0]["text"])
    # Searchable at once with no worker running: the read ran in the server's own process.
    assert added["items"] == [{"id": "seat", "status": "added", "searchable": True}]
    found = json.loads(out[2]["result"]["content"][0]["text"])
    assert out[2]["result"]["isError"] is False and found["hits"][0]["item_ids"] == ["seat"]


def test_it_refuses_to_start_as_another_process_kind(project):
    started = subprocess.run(
        [sys.executable, *server_args(project)],
        cwd=ROOT,
        env=server_env(kind="command"),
        capture_output=True,
        text=True,
        timeout=60,
        input=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + "\n",
    )
    assert started.returncode != 0 and started.stdout == ""
    assert "TWIN_PROCESS is 'command'" in started.stderr and "TWIN_PROCESS=stdio" in started.stderr


def test_the_sdk_calls_each_of_the_twelve_on_connector_data(project, tmp_path):
    from django.core.management import call_command

    call_command("loadsample", "--account", "u_1", "--project", project.slug)
    answer = sdk(
        tmp_path,
        project,
        [
            ["memory_search", {"query": "Why did the Friday deploy fail?"}],
            ["memory_grep", {"pattern": "INC-101"}],
            ["memory_read", {"path": "index.md"}],
            ["memory_ls", {"path": "passages/memory/"}],
            ["memory_latest", {"k": 3}],
            ["memory_overview", {}],
            ["memory_history", {"subject": "Tom Becker"}],
            ["memory_recall", {"question": "When was the last rollback?", "as_of": "2025-04-12"}],
            ["memory_lessons", {"task": "deploy the payments service on a Friday afternoon"}],
            ["memory_how_they_work", {"who": "Tom Becker"}],
            ["memory_next", {"who": "Tom Becker", "top": 2}],
        ],
    )
    calls = {c["name"]: c for c in answer["calls"]}
    grep = json.loads(calls["memory_grep"]["text"])
    around = sdk(tmp_path, project, [["memory_around", {"passage_id": grep["hits"][0]["passage_id"], "width": 1}]])
    calls["memory_around"] = around["calls"][0]
    assert sorted(calls) == sorted(READ_TOOLS + LOCAL_TOOLS)
    errors = {name: c["text"][:200] for name, c in calls.items() if c["isError"]}
    assert errors in ({}, {"memory_history": calls["memory_history"]["text"][:200]}), errors
    recall = json.loads(calls["memory_recall"]["text"])
    assert 0 <= recall["enough"] <= 1 and "Records" in recall["text"]
    assert json.loads(calls["memory_lessons"]["text"])["lessons"]
    assert json.loads(calls["memory_how_they_work"]["text"])["run_ups"]
    guesses = json.loads(calls["memory_next"]["text"])["guesses"]
    assert len(guesses) == 2 and all(0 <= g["probability"] <= 1 for g in guesses)
