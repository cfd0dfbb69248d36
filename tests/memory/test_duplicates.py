"""Duplicates caught on write: an item sent without an id that repeats one already stored (kind, author and
normal text; for a message its session and time too) answers `duplicate` with the id it repeats and is not
stored again, within one call, across calls, and when ten callers send it at the same moment."""

from memory.models import Item, UsageDay
from memory.selectors import scoped
from tests.ops.test_concurrent_writes import in_threads

CALLERS = 10


def stored(project, **filters) -> int:
    with scoped(project.pk):
        return Item.objects.filter(**filters).count()


def test_an_item_repeated_without_an_id_is_a_duplicate_within_a_call_and_across_calls(api, project):
    first = api.add({"text": "Likes green tea", "author": "Ana"}, {"text": "  likes GREEN\u3000tea ", "author": "Ana"})[
        "items"
    ]  # case, spaces, NFKC
    original = first[0]["id"]
    assert first[0]["status"] == "added"
    assert first[1] == {"id": original, "status": "duplicate", "duplicate_of": original, "searchable": True}
    again = api.add({"text": "Likes green tea", "author": "Ana"})["items"][0]
    assert again["status"] == "duplicate" and again["duplicate_of"] == original
    assert stored(project) == 1
    # Another author, another kind: not the same item.
    others = api.add(
        {"text": "Likes green tea", "author": "Rui"}, {"text": "Likes green tea", "kind": "document", "author": "Ana"}
    )["items"]
    assert [o["status"] for o in others] == ["added", "added"]


def test_a_message_is_a_duplicate_only_when_resent_with_its_session_and_time(api, project):
    sent = {"text": "ok", "kind": "message", "session": "s1", "at": "2026-01-05T10:00:00Z", "author": "Ana"}
    original = api.add(sent)["items"][0]["id"]
    retried = api.add({**sent, "at": "2026-01-05T11:00:00+01:00"})["items"][0]  # the same moment
    assert retried["status"] == "duplicate" and retried["duplicate_of"] == original
    later = api.add({**sent, "at": "2026-01-05T10:05:00Z"}, {**sent, "session": "s2"})["items"]
    assert [each["status"] for each in later] == ["added", "added"]  # a second "ok", or in another chat
    assert stored(project, kind="message") == 3


def test_a_callers_id_is_never_merged(api, project):
    api.add({"text": "Works at Acme", "id": "job"})
    assert api.add({"text": "Works at Acme", "id": "job"})["items"][0]["status"] == "unchanged"
    assert api.add({"text": "works at acme", "id": "job-2"})["items"][0]["status"] == "added"
    # Sent without an id, it repeats the first item stored with that content, whoever named its id.
    repeat = api.add({"text": "Works at  Acme"})["items"][0]
    assert repeat["status"] == "duplicate" and repeat["duplicate_of"] == "job"
    assert stored(project) == 2


def test_an_edit_may_make_an_item_say_what_another_says(api, project):
    tea, coffee = (item["id"] for item in api.add({"text": "Likes tea"}, {"text": "Likes coffee"})["items"])
    answer = api.tool("correct", id=coffee, text="Likes tea")
    assert answer.status_code == 200 and answer.json()["status"] == "edited"
    again = api.add({"text": "Likes tea"})["items"][0]
    assert again["status"] == "duplicate" and again["duplicate_of"] == tea
    assert stored(project) == 2


def test_ten_adds_of_one_text_at_once_store_it_once(api, project):
    responses = in_threads(
        CALLERS, lambda i: api.as_account("u_1").tool("add", items=[{"text": "The spare key is under the blue pot"}])
    )
    assert [getattr(r, "status_code", r) for r in responses] == [200] * CALLERS
    items = [r.json()["items"][0] for r in responses]
    assert sorted(item["status"] for item in items).count("added") == 1, items
    original = next(item["id"] for item in items if item["status"] == "added")
    assert all(item["duplicate_of"] == original for item in items if item["status"] != "added")
    assert stored(project) == 1


def test_usage_counts_the_duplicates_caught(api, project):
    api.add({"text": "Allergic to peanuts"}, {"text": "allergic to peanuts"})
    api.add({"text": "Allergic to peanuts"})
    with scoped(project.pk):
        day = UsageDay.objects.get(tool="memory_add", surface="http")
    assert (day.items_added, day.duplicates_caught) == (1, 2)
