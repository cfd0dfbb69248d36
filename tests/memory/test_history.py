"""The bi-temporal history: what was true, from when, until when; and when memory learned and unlearned it."""

import json

import pytest


def note(text, id, at, **extra):
    return {"text": text, "id": id, "at": at, "author": "Alice Chen", **extra}


@pytest.fixture
def moved(api):
    api.add(
        note("I live in Porto.", "home1", "2024-01-10"),
        note("I work at Acme as a designer.", "job", "2024-02-01"),
        note("I moved to Lisbon on 2025-03-01.", "home2", "2025-03-10"),
    )
    return api


def chain(api, subject="Alice Chen", attribute="home_city"):
    response = api.tool("history", subject=subject, attribute=attribute)
    assert response.status_code == 200, response.content
    return response.json()["chain"]


def test_a_later_value_supersedes_and_the_chain_is_oldest_first(moved):
    porto, lisbon = chain(moved)
    assert (porto["value"], lisbon["value"]) == ("Porto", "Lisbon")
    assert porto["valid_from"].startswith("2024-01-10") and porto["valid_to"].startswith("2025-03-01")
    assert lisbon["valid_from"].startswith("2025-03-01") and lisbon["valid_to"] is None
    assert (porto["current"], lisbon["current"]) == (False, True)
    assert porto["recorded_at"] and porto["retracted_at"] is None
    assert porto["source"]["item_id"] == "home1" and porto["source"]["path"].startswith("passages/memory/notes/")
    assert lisbon["source"]["passage_id"].endswith("/p_0001")


def test_search_as_of_a_day_gets_the_value_of_that_day(moved):
    before = moved.tool("search", query="Where does Alice live?", before="2025-01-01").json()
    after = moved.tool("search", query="Where does Alice live?").json()

    def homes(answer):
        return [f["value"] for f in answer["known"] if f["attribute"] == "home_city"]

    assert homes(before) == ["Porto"]
    assert homes(after) == ["Lisbon"]
    assert after["known"][0]["attribute"] == "home_city"  # what the question asks about comes first
    assert all(h["at"] < "2025-01-01" for h in before["hits"])


def test_nothing_said_later_leaks_into_an_as_of_question(api):
    # Said in April that the move happened in February: as of March, memory had not been told.
    api.add(note("I live in Porto.", "h1", "2024-01-10"), note("I moved to Braga on 2025-02-01.", "h2", "2025-04-01"))
    homes = [
        f["value"]
        for f in api.tool("search", query="Where does Alice live?", before="2025-03-01").json()["known"]
        if f["attribute"] == "home_city"
    ]
    assert homes == ["Porto"]


def test_many_valued_attributes_accumulate(api):
    api.add(note("I have a dog named Rex.", "p1", "2024-01-01"), note("I have a cat named Miso.", "p2", "2025-01-01"))
    pets = chain(api, attribute="pet")
    assert {p["value"] for p in pets} == {"Rex (dog)", "Miso (cat)"}
    assert all(p["current"] for p in pets)


def test_expires_ends_a_fact(api):
    api.add(note("I live in Rome.", "trip", "2020-01-01", expires="2020-02-01"))
    [rome] = chain(api)
    assert rome["valid_to"].startswith("2020-02-01") and rome["current"] is False
    assert not [
        f for f in api.tool("search", query="Where does Alice live?").json()["known"] if f["attribute"] == "home_city"
    ]


def test_editing_an_item_retracts_what_it_said(moved):
    moved.add(note("I live in Faro.", "home1", "2024-01-10"))
    values = {(c["value"], c["retracted_at"] is not None) for c in chain(moved)}
    assert values == {("Porto", True), ("Faro", False), ("Lisbon", False)}
    porto = next(c for c in chain(moved) if c["value"] == "Porto")
    assert porto["retraction"] == "edited" and porto["current"] is False


def test_correcting_a_value_retracts_the_one_it_fixes_until_the_correction_is_forgotten(api):
    api.add(
        note("I live in Porto.", "a", "2024-01-01"), note("Actually, I live in Braga, not Porto.", "b", "2024-01-02")
    )
    porto, braga = chain(api)
    assert porto["retraction"] == "corrected" and braga["value"] == "Braga" and braga["current"]
    api.tool("forget", ids=["b"])
    [porto] = chain(api)
    assert porto["retraction"] is None and porto["current"]


def test_forgetting_an_item_deletes_its_facts(moved):
    before = len(chain(moved))
    assert moved.tool("forget", ids=["home2"]).json()["erased"]["facts"] == 1
    entries = chain(moved)
    assert len(entries) == before - 1 and not [c for c in entries if c["retraction"] == "forgotten"]
    assert [c["value"] for c in entries if c["current"]] == ["Porto"]  # the value before it stands again
    assert "Lisbon" not in json.dumps(moved.tool("history", subject="Alice Chen").json())


def test_a_missed_subject_answers_with_the_nearest(moved):
    response = moved.tool("history", subject="Alise Chen")
    assert response.status_code == 404
    assert response.json()["error"] == "no_subject" and response.json()["nearest"] == ["Alice Chen"]
    assert moved.tool("history", subject="alice").json()["subject"] == "Alice Chen"  # a unique first name


def test_an_attribute_with_nothing_recorded_says_what_is(moved):
    response = moved.tool("history", subject="Alice Chen", attribute="pet")
    assert response.status_code == 404
    assert set(response.json()["attributes"]) == {"home_city", "employer", "job_title"}


def test_subject_files_show_current_facts_and_history(moved):
    assert "subjects/" in [c["name"] for c in moved.tool("ls").json()["children"]]
    [entry] = moved.tool("ls", path="subjects/").json()["children"]
    assert entry["name"] == "alice-chen.md"
    text = moved.tool("read", path="subjects/alice-chen.md").json()["text"]
    assert "- home_city: Lisbon (since 2025-03-01" in text
    assert "- Porto: 2024-01-10 to 2025-03-01" in text
    assert "subjects/alice-chen.md" in moved.tool("read", path="index.md").json()["text"]


def test_history_never_crosses_end_users_or_projects(moved, charlie_api):
    assert moved.as_account("u_2").tool("history", subject="Alice Chen").status_code == 404
    assert charlie_api.tool("history", subject="Alice Chen").status_code == 404
    moved.as_account("u_2").add(note("I live in Oslo.", "x", "2024-01-01"))
    assert [c["value"] for c in chain(moved.as_account("u_2"))] == ["Oslo"]


def test_the_brief_without_a_model_is_assembled_deterministically(moved):
    body = moved.tool("search", query="Where does Alice live?").json()
    assert "answer" not in body
    assert body["mode"] == "brief" and body["known"] and body["hits"]


def test_the_brief_with_a_model_carries_its_answer(moved, fake_llm):
    lisbon = moved.tool("grep", pattern="Lisbon").json()["hits"][0]["passage_id"]
    fake_llm.reply(f"Alice lives in Lisbon since March 2025 [{lisbon}].")
    body = moved.tool("search", query="Where does Alice live?").json()
    assert body["answer"]["text"].startswith("Alice lives in Lisbon")
    assert body["answer"]["cites"] == [lisbon]
    [request] = fake_llm.requests
    assert "Lisbon" in json.dumps(request["body"]["messages"])
    ranked = moved.tool("search", query="Lisbon", after="2020-01-01").json()
    assert "answer" not in ranked and len(fake_llm.requests) == 1  # a ranked list makes no model call
