"""memory_add: storing items, editing by id, the background read, and every bound of the body."""

import pytest

from memory.limits import ITEM_FIELD_MAX, ITEM_ID_MAX, ITEM_METADATA_MAX_BYTES, ITEM_TEXT_MAX, ITEMS_MAX
from memory.models import Item, Passage
from memory.selectors import scoped


def message(text, id, session="s1", **extra):
    return {"text": text, "kind": "message", "id": id, "session": session, **extra}


def test_it_adds_items_and_makes_them_searchable(api):
    answer = api.add(
        message("Alice: I moved to Porto.", "m1", author="Alice", at="2026-01-05"),
        {"text": "Remember the dentist on Friday", "id": "n1"},
    )
    assert answer == {
        "items": [
            {"id": "m1", "status": "added", "searchable": True},
            {"id": "n1", "status": "added", "searchable": True},
        ],
        "searchable": True,
    }
    hits = api.tool("grep", pattern="porto").json()["hits"]
    assert hits[0]["item_ids"] == ["m1"] and hits[0]["at"].startswith("2026-01-05")


def test_it_fills_the_defaults(api, project):
    answer = api.add({"text": "Likes green tea"})
    generated = answer["items"][0]["id"]
    assert generated.startswith("it_")
    with scoped(project.pk):
        item = Item.objects.get(external_id=generated)
    assert item.kind == "note" and item.at is not None and item.metadata == {}


def test_without_wait_it_still_stores_and_reads(api, project):
    answer = api.add({"text": "A note", "id": "n1"}, wait=False)
    assert answer["items"][0]["status"] == "added"
    with scoped(project.pk):
        assert Item.objects.filter(external_id="n1").exists()


def test_resending_an_id_edits_the_item_and_keeps_its_earlier_text(api, project):
    api.add({"text": "I live in Porto", "id": "home"})
    answer = api.add({"text": "I live in Braga", "id": "home"})
    assert answer["items"][0]["status"] == "edited"
    assert api.tool("grep", pattern="Porto").json()["found"] == 0
    assert api.tool("grep", pattern="Braga").json()["found"] == 1
    versions = api.tool("versions", id="home").json()
    assert versions["current"]["text"] == "I live in Braga" and versions["current"]["version"] == 2
    assert [v["text"] for v in versions["versions"]] == ["I live in Porto"]
    with scoped(project.pk):
        assert Passage.objects.filter(item_ids__contains=["home"]).count() == 1


def test_resending_the_same_item_leaves_it_unchanged(api):
    api.add({"text": "Same", "id": "x", "at": "2026-02-01"})
    answer = api.add({"text": "Same", "id": "x"})
    assert answer["items"][0] == {"id": "x", "status": "unchanged", "searchable": True}
    assert api.tool("versions", id="x").json()["versions"] == []


def test_a_change_with_a_new_id_keeps_both(api):
    api.add({"text": "Works at Acme", "id": "job1", "at": "2025-01-01"})
    api.add({"text": "Works at Globex", "id": "job2", "at": "2026-01-01"})
    hits = api.tool("grep", pattern="Works at").json()["hits"]
    assert [h["item_ids"] for h in hits] == [["job2"], ["job1"]]  # newest first, both kept


def test_messages_of_a_session_share_a_thread_in_order(api):
    api.add(
        message("A: hi", "m1", at="2026-01-01T10:00:00"),
        message("B: hello", "m2", at="2026-01-01T10:01:00"),
        message("A: other session", "m3", session="s2"),
    )
    first = api.tool("grep", pattern="A: hi").json()["hits"][0]
    second = api.tool("grep", pattern="B: hello").json()["hits"][0]
    other = api.tool("grep", pattern="other session").json()["hits"][0]
    assert first["passage_id"].endswith("/p_0001") and second["passage_id"].endswith("/p_0002")
    assert first["passage_id"].split("/")[0] == second["passage_id"].split("/")[0]
    assert other["passage_id"].split("/")[0] != first["passage_id"].split("/")[0]
    assert first["path"].startswith("passages/memory/messages/th_")


def test_edits_and_new_messages_read_together_keep_and_take_their_places(api):
    """One call (one slice of the read) edits two messages of a session and adds one: the edited keep their
    passages' addresses, the new one takes the thread's next, and each is searchable as it now reads."""
    api.add(*(message(f"A: line {n}", f"m{n}", at=f"2026-01-01T10:0{n}:00") for n in range(1, 4)))
    api.add(
        message("A: line one, edited", "m1", at="2026-01-01T10:01:00"),
        message("A: line three, edited", "m3", at="2026-01-01T10:03:00"),
        message("A: line four", "m4", at="2026-01-01T10:04:00"),
    )
    places = {
        h["item_ids"][0]: h["passage_id"].split("/")[1] for h in api.tool("grep", pattern="A: line").json()["hits"]
    }
    assert places == {"m1": "p_0001", "m2": "p_0002", "m3": "p_0003", "m4": "p_0004"}
    assert api.tool("grep", pattern="edited").json()["found"] == 2
    assert api.tool("grep", pattern="line 1").json()["found"] == 0, "the old text is no passage any more"


def test_a_document_is_its_own_thread_cut_at_paragraphs(api, project):
    paragraphs = [f"Paragraph {i}: " + "words about the project plan. " * 20 for i in range(8)]
    api.add({"text": "\n\n".join(paragraphs), "kind": "document", "id": "doc", "title": "Plan"})
    ls = api.tool("ls", path="passages/memory/documents/").json()["children"]
    assert len(ls) == 1 and ls[0]["passages"] > 1
    files = api.tool("ls", path=ls[0]["path"]).json()["children"]
    assert [f["name"] for f in files][:2] == ["p_0001.md", "p_0002.md"]
    with scoped(project.pk):
        texts = [p.text for p in Passage.objects.filter(item__external_id="doc").order_by("seq")]
    assert all(t.startswith("Paragraph") for t in texts)  # cut at paragraph bounds
    assert "".join(texts).count("Paragraph") == 8


def test_a_note_without_a_session_is_its_own_thread(api):
    api.add({"text": "Note one", "id": "a"}, {"text": "Note two", "id": "b"})
    threads = api.tool("ls", path="passages/memory/notes/").json()["children"]
    assert len(threads) == 2


def test_a_read_key_cannot_add(read_api, project):
    response = read_api.tool("add", items=[{"text": "x"}])
    assert response.status_code == 403
    assert response.json()["error"] == "insufficient_scope"
    with scoped(project.pk):
        assert not Item.objects.exists()


# Every bound: the exact limit passes, one past it is refused naming the field and the bound.
@pytest.mark.parametrize(
    "item, field",
    [
        ({"text": ""}, "items[0].text"),
        ({"text": "x" * (ITEM_TEXT_MAX + 1)}, "items[0].text"),
        ({"text": "x", "kind": "email"}, "items[0].kind"),
        ({"text": "x", "id": ""}, "items[0].id"),
        ({"text": "x", "id": "i" * (ITEM_ID_MAX + 1)}, "items[0].id"),
        ({"text": "x", "at": "yesterday"}, "items[0].at"),
        ({"text": "x", "at": "2026-13-45"}, "items[0].at"),
        ({"text": "x", "at": "2026-01-01T10:00:00" + "0" * 30}, "items[0].at"),
        ({"text": "x", "expires": "soon"}, "items[0].expires"),
        ({"text": "x", "author": "a" * (ITEM_FIELD_MAX + 1)}, "items[0].author"),
        ({"text": "x", "role": "r" * (ITEM_FIELD_MAX + 1)}, "items[0].role"),
        ({"text": "x", "session": "s" * (ITEM_FIELD_MAX + 1)}, "items[0].session"),
        ({"text": "x", "title": "t" * (ITEM_FIELD_MAX + 1)}, "items[0].title"),
        ({"text": "x", "about": "a" * (ITEM_FIELD_MAX + 1)}, "items[0].about"),
        ({"text": "x", "metadata": "not an object"}, "items[0].metadata"),
        ({"text": "x", "metadata": {"blob": "b" * ITEM_METADATA_MAX_BYTES}}, "items[0].metadata"),
        ({"text": "x", "colour": "red"}, "items[0].colour"),
        ({"text": 42}, "items[0].text"),
        ({"kind": "note"}, "items[0].text"),
        ({"text": "nul \x00 byte"}, "items[0].text"),
    ],
)
def test_it_refuses_a_bad_item_naming_the_field(api, project, item, field):
    response = api.tool("add", items=[item])
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] == "invalid_arguments"
    assert body["field"] == field
    assert body["message"].startswith(field)
    with scoped(project.pk):
        assert not Item.objects.exists()


def test_the_limits_themselves_are_accepted(api):
    item = {
        "text": "x" * ITEM_TEXT_MAX,
        "kind": "document",
        "id": "i" * ITEM_ID_MAX,
        "at": "2026-01-01T10:00:00.000000+00:00",
        "author": "a" * ITEM_FIELD_MAX,
        "metadata": {"blob": "b" * (ITEM_METADATA_MAX_BYTES - 20)},
    }
    assert api.tool("add", items=[item]).status_code == 200


def test_the_number_of_items_is_bounded(api, project):
    assert api.tool("add", items=[]).json()["field"] == "items"
    too_many = api.tool("add", items=[{"text": f"n{i}"} for i in range(ITEMS_MAX + 1)])
    assert too_many.status_code == 400
    assert "500" in too_many.json()["message"]
    assert api.tool("add", items=[{"text": f"n{i}"} for i in range(ITEMS_MAX)], wait=False).status_code == 200
    with scoped(project.pk):
        assert Item.objects.count() == ITEMS_MAX


def test_one_bad_item_stores_none(api, project):
    response = api.tool("add", items=[{"text": "fine", "id": "a"}, {"text": "fine too", "id": "b"}, {"text": ""}])
    assert response.status_code == 400 and response.json()["field"] == "items[2].text"
    with scoped(project.pk):
        assert not Item.objects.exists()


def test_an_id_may_appear_once_per_call(api):
    response = api.tool("add", items=[{"text": "a", "id": "same"}, {"text": "b", "id": "same"}])
    assert response.status_code == 400 and response.json()["field"] == "items[1].id"


def test_bad_input_never_touches_what_is_stored(api):
    api.add({"text": "Keep me", "id": "k"})
    api.tool("add", items=[{"text": "Changed", "id": "k"}, {"text": "", "id": "bad"}])
    assert api.tool("versions", id="k").json()["current"]["text"] == "Keep me"


def test_unknown_top_level_fields_and_non_objects_are_refused(api):
    assert api.tool("add", items=[{"text": "x"}], colour="red").json()["field"] == "colour"
    response = api.post("/v1/memory/add", [{"text": "x"}])
    assert response.status_code == 400 and response.json()["field"] == "arguments"
    bad_json = api.client.post(
        "/v1/memory/add", data="{not json", content_type="application/json", headers=api.headers()
    )
    assert bad_json.status_code == 400


def test_a_full_size_call_fits_and_a_larger_body_is_refused_as_json(api, settings):
    big = [{"text": f"note {i}", "metadata": {"blob": "b" * 16_000}} for i in range(200)]  # 3.2 MB
    assert api.tool("add", items=big, wait=False).status_code == 200
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1_000_000
    response = api.tool("add", items=big)
    assert response.status_code == 413
    assert response.json()["error"] == "too_large" and response.json()["bound"] == 1_000_000
