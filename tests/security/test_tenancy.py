"""One end user never sees another's memory; one project never another's."""

import json

import pytest


@pytest.fixture
def alices_memory(api):
    api.add({"text": "My bank is Monzo and my cat is Miso", "id": "secret", "kind": "message", "session": "s"})
    return api.tool("grep", pattern="Miso").json()["hits"][0]


def test_another_end_user_of_the_same_project_sees_nothing(api, alices_memory):
    other = api.as_account("u_2")
    other.add({"text": "Unrelated note", "id": "mine"})
    assert other.tool("grep", pattern="Miso").json()["found"] == 0
    assert all("Miso" not in h["text"] for h in other.tool("search", query="cat Miso").json()["hits"])
    assert other.tool("read", path=alices_memory["path"]).status_code == 404
    assert other.tool("around", passage_id=alices_memory["passage_id"]).status_code == 404
    assert other.tool("versions", id="secret").status_code == 404
    assert other.tool("forget", ids=["secret"]).status_code == 404
    assert "Miso" not in other.tool("overview").json()["index"]
    assert api.tool("grep", pattern="Miso").json()["found"] == 1  # still there for its owner


def test_another_project_with_the_same_end_user_id_sees_nothing(api, charlie_api, alices_memory):
    assert charlie_api.account == api.account
    assert charlie_api.tool("overview").status_code == 404
    charlie_api.add({"text": "Charlie's own note", "id": "c"})
    assert charlie_api.tool("grep", pattern="Miso").json()["found"] == 0
    assert charlie_api.tool("read", path=alices_memory["path"]).status_code == 404
    assert json.loads(charlie_api.call("memory_grep", pattern="Miso")["result"]["content"][0]["text"])["found"] == 0


def test_the_same_item_id_in_two_memories_is_two_items(api, alices_memory):
    other = api.as_account("u_2")
    other.add({"text": "Different text", "id": "secret"})
    assert api.tool("versions", id="secret").json()["current"]["text"].startswith("My bank")
    assert other.tool("versions", id="secret").json()["versions"] == []


def test_missing_and_not_yours_answer_alike(api, alices_memory):
    other = api.as_account("u_2")
    other.add({"text": "x", "id": "x"})
    theirs = other.tool("read", path=alices_memory["path"]).json()
    missing = other.tool("read", path=alices_memory["path"].replace("th_", "th_f")).json()
    assert theirs["error"] == missing["error"] == "not_found"
