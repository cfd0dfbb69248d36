"""POST /v1/memory/export and /v1/memory/import (docs/export-format.md): a memory taken out and put back
whole, into a fresh end user or another project, with the same items, versions, facts and search answers;
bad files refused by line and field with nothing stored; keys, tenancy, bounds."""

import gzip
import importlib
import json
import threading
import tracemalloc

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from accounts.models import EndUser
from memory.limits import EXPORTS_AT_ONCE, IMPORT_MAX_BYTES
from memory.models import Fact, Item
from memory.selectors import scoped
from tests.conftest import Api
from tests.read.test_fair_read import unread_rows

# Two passages: the second states a fact, so its source is the item's passage 2.
LONG_DOCUMENT = (
    "Tomatoes go along the south wall. " * 36 + "\n\nThe herbs (basil, thyme) sit by the kitchen "
    "door.\n\nMy sister Ana lives in Porto."
)
MEMORY = [
    {"id": "home", "text": "I live in Lisbon.", "kind": "note", "at": "2021-03-01"},
    {
        "id": "job",
        "text": "I work at Acme as an engineer.",
        "kind": "note",
        "at": "2021-04-01",
        "metadata": {"source": "onboarding", "tags": ["work"]},
    },
    {
        "id": "m1",
        "text": "We should book the flights to Tokyo for the conference.",
        "kind": "message",
        "session": "s1",
        "author": "u_1",
        "role": "user",
        "at": "2022-05-01T10:00:00Z",
    },
    {
        "id": "m2",
        "text": "Booked: TAP to Tokyo on 12 June, back on 20 June.",
        "kind": "message",
        "session": "s1",
        "author": "assistant",
        "role": "assistant",
        "at": "2022-05-01T10:01:00Z",
    },
    {
        "id": "doc",
        "kind": "document",
        "title": "Garden plan",
        "at": "2022-06-01",
        "about": "the garden",
        "text": LONG_DOCUMENT,
    },
    {"id": "trip", "text": "I am in Porto this week.", "at": "2023-01-10", "expires": "2023-01-17"},
    {"text": "My favourite tea is genmaicha.", "at": "2023-02-01"},  # a generated id, exported as it is
]
SMALL, GROWTH = 250, 4  # a memory of SMALL items, then of GROWTH times as many
QUESTIONS = (
    "Where does the user live?",
    "When is the flight to Tokyo?",
    "What goes by the kitchen door?",
    "Which tea do I like?",
)


def export(api: Api) -> list[dict]:
    response = api.post("/v1/memory/export")
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/x-ndjson"
    return [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]


def body(lines: list[dict]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def import_(api: Api, data: bytes, **headers):
    return api.client.post(
        "/v1/memory/import", data=data, content_type="application/x-ndjson", headers=api.headers(**headers)
    )


def hits(api: Api) -> list[list[list[str]]]:
    answers = [api.tool("search", query=question).json() for question in QUESTIONS]
    return [[hit["item_ids"] for hit in answer["hits"]] for answer in answers]


@pytest.fixture
def memory(api):
    api.add(*MEMORY)
    api.add({"id": "home", "text": "I live in Berlin now.", "kind": "note", "at": "2021-03-01"})  # an edit
    api.add({"id": "move", "text": "I moved to Madrid in 2024.", "at": "2024-02-01"})
    return api


@pytest.fixture
def one_note(api):
    api.add({"id": "n1", "text": "A note."})
    return api


def test_it_round_trips_into_a_fresh_end_user_and_another_project(memory, read_api, charlie_api):
    exported = export(read_api)
    header, lines = exported[0], exported[1:]
    assert header["format"] == "twin-memory-export" and header["version"] == 1
    assert header["end_user"] == "u_1" and header["items"] == len(lines) == len(MEMORY) + 1
    by_id = {line["item"]["id"]: line for line in lines}
    assert by_id["home"]["version"] == 2 and by_id["home"]["versions"][0]["text"] == "I live in Lisbon."
    assert by_id["trip"]["item"]["expires"].startswith("2023-01-17")
    assert by_id["job"]["item"]["metadata"] == {"source": "onboarding", "tags": ["work"]}
    assert any(key.startswith("it_") for key in by_id), "a generated id is exported as it is"
    assert any(fact["value"] == "Madrid" for fact in by_id["move"]["facts"])
    assert {json.dumps(fact["source"]) for fact in by_id["doc"]["facts"]} == {'{"item": "doc", "passage": 2}'}

    fresh = memory.as_account("u_2")
    answer = import_(fresh, body(exported)).json()
    assert answer["items"] == len(lines) and answer["statuses"] == {"added": len(lines)}
    assert answer["versions"] == 1 and answer["facts"] == sum(len(line["facts"]) for line in lines)
    again = export(fresh)
    assert again[1:] == lines, "the same items, versions and facts: ids and times kept"
    assert hits(fresh) == hits(memory), "the same search answers"
    history = fresh.tool("history", subject="u_1", attribute="home_city").json()
    assert [entry["value"] for entry in history["chain"]] == [
        entry["value"] for entry in memory.tool("history", subject="u_1", attribute="home_city").json()["chain"]
    ]
    assert all(
        entry["source"]["passage_id"].startswith("th_") for entry in history["chain"] if entry["retracted_at"] is None
    ), "imported facts point at the rebuilt passages"
    sister = fresh.tool("history", subject="Ana").json()["chain"][0]["source"]
    assert sister["passage_id"].endswith("/p_0002") and sister["item_id"] == "doc"

    assert import_(charlie_api, gzip.compress(body(exported))).status_code == 200, "gzip, told by its bytes"
    assert export(charlie_api)[1:] == lines and hits(charlie_api) == hits(memory), "moved to another project"

    twice = import_(fresh, body(exported)).json()
    assert twice["statuses"] == {"unchanged": len(lines)} and twice["facts"] == twice["versions"] == 0
    assert export(fresh)[1:] == lines, "importing the same file again changes nothing"

    fresh.add({"id": "move", "text": "I moved to Lisbon in 2024.", "at": "2024-02-01"})
    assert "Madrid" not in current(fresh, "u_1"), "an imported item edited: its imported facts retracted"
    assert current(fresh, "u_2") == ["Lisbon"], "and its new text read for facts (its speaker is now u_2)"


def current(api: Api, subject: str) -> list[str]:
    chain = api.tool("history", subject=subject, attribute="home_city").json()["chain"]
    return [entry["value"] for entry in chain if entry["retracted_at"] is None]


def _lines(count: int = 3) -> list[dict]:
    items = [
        {"item": {"id": f"n{i}", "text": f"Note {i}.", "at": "2024-01-01"}, "version": 1, "read": False}
        for i in range(count)
    ]
    return [{"format": "twin-memory-export", "version": 1, "items": count}, *items]


def _broken(change):
    lines = _lines()
    change(lines)
    return body(lines)


BAD_FILES = [  # (file, the line and the field refused)
    (_broken(lambda lines: lines[2]["item"].update(at="2024-13-45")), 3, "item.at"),
    (_broken(lambda lines: lines[3]["item"].pop("text")), 4, "item.text"),
    (_broken(lambda lines: lines[2]["item"].update(kind="email")), 3, "item.kind"),
    (_broken(lambda lines: lines[2]["item"].pop("id")), 3, "item.id"),
    (_broken(lambda lines: lines[3]["item"].update(id="n0")), 4, "item.id"),
    (_broken(lambda lines: lines[2]["item"].update(author="two\nlines")), 3, "item.author"),
    (
        _broken(lambda lines: lines[2].update(versions=[{"version": 1, "text": "x", "replaced_at": "2024-01-01"}])),
        3,
        "versions[0].version",
    ),
    (
        _broken(
            lambda lines: lines[2].update(
                facts=[
                    {
                        "subject": "u_1",
                        "attribute": "home_city",
                        "kind": "value",
                        "valid_from": "2024-01-01",
                        "stated_at": "2024-01-01",
                        "recorded_at": "yesterday",
                        "source": {"item": "n1"},
                    }
                ]
            )
        ),
        3,
        "facts[0].recorded_at",
    ),
    (_broken(lambda lines: lines[0].update(format="something else")), 1, "format"),
    (_broken(lambda lines: lines[0].update(version=2)), 1, "version"),
    (_broken(lambda lines: lines[0].update(items=4)), 1, "items"),
    (body(_lines())[:-20], 4, "line"),
    (body(_lines()) + b"[1, 2]\n", 5, "line"),
    (gzip.compress(body(_lines()))[:-8], 5, "body"),  # its end cut off: found after the last line
    (b"", 1, "format"),
]


def test_a_bad_line_is_refused_by_number_and_field_and_nothing_is_stored(api):
    for data, line, field in BAD_FILES:
        refused = import_(api, data)
        assert refused.status_code == 400, refused.content
        answer = refused.json()
        assert (answer["error"], answer["line"], answer["field"]) == ("invalid_import", line, field)
        assert answer["message"].startswith(f"line {line}: ")
        assert "2024-13-45" not in answer["message"] and "two" not in answer["message"], "never echoes a value"
    assert api.tool("overview").status_code == 404, "nothing stored, and no end user made"
    assert import_(api, body(_lines())).json()["statuses"] == {"added": 3}, "the good file is stored"


def test_an_import_past_the_projects_read_backlog_is_refused_whole(api, project, settings):
    """The same quota as memory_add's, checked in the first pass: a file that fits the cap but not beside
    what already waits is 429, to be sent again; nothing stored, and no end user made."""
    settings.READ_BACKLOG_ITEMS = 5
    unread_rows(project, EndUser.objects.create(project=project, external_id="u_9"), 3)
    refused = import_(api, body(_lines(3)))
    assert refused.status_code == 429 and refused.json()["error"] == "read_backlog_full", refused.content
    assert refused["Retry-After"] == str(refused.json()["retry_after"])
    assert api.tool("overview").status_code == 404, "nothing stored, and no end user made"
    settings.READ_BACKLOG_ITEMS = 6
    assert import_(api, body(_lines(3))).json()["statuses"] == {"added": 3}, "up to the cap"


def test_an_import_larger_than_the_whole_read_backlog_cap_is_413_not_429(api, settings):
    """No wait would ever admit a file holding more than the cap itself, so it is not told to retry: 413
    naming the bound and its setting, even with nothing waiting to be read."""
    settings.READ_BACKLOG_ITEMS = 2
    refused = import_(api, body(_lines(3)))
    assert refused.status_code == 413, refused.content
    answer = refused.json()
    assert (answer["error"], answer["bound"], answer["setting"], answer["field"]) == (
        "too_large",
        2,
        "READ_BACKLOG_ITEMS",
        "body",
    )
    assert "Retry-After" not in refused and "retry_after" not in answer and "READ_BACKLOG_ITEMS" in answer["message"]
    settings.READ_BACKLOG_ITEMS, settings.READ_BACKLOG_CHARACTERS = 3, len("Note 0.") * 3 - 1
    answer = import_(api, body(_lines(3))).json()
    assert (answer["error"], answer["setting"]) == ("too_large", "READ_BACKLOG_CHARACTERS")
    assert api.tool("overview").status_code == 404, "nothing stored, and no end user made"
    settings.READ_BACKLOG_CHARACTERS = len("Note 0.") * 3
    assert import_(api, body(_lines(3))).json()["statuses"] == {"added": 3}, "a file as large as the cap"


def test_the_read_key_is_refused_on_import(read_api, api):
    refused = import_(read_api, body(_lines()))
    assert refused.status_code == 403 and refused.json()["error"] == "insufficient_scope"
    assert api.tool("overview").status_code == 404


def test_another_projects_key_cannot_export_this_end_user(one_note, charlie_api):
    refused = charlie_api.post("/v1/memory/export")
    assert refused.status_code == 404 and refused.json()["error"] == "no_memory"
    charlie_api.add({"id": "c1", "text": "Charlie's own note."})
    assert [line["item"]["id"] for line in export(charlie_api)[1:]] == ["c1"], "only his own end user's"


def test_the_migration_places_the_facts_recorded_before_it(api, project):
    api.add({"id": "doc", "kind": "document", "text": LONG_DOCUMENT})
    migration = importlib.import_module("memory.migrations.0011_portable_memory")
    with scoped(project.pk):
        recorded = list(Fact.objects.order_by("pk").values_list("source_seq", flat=True))
        Fact.objects.update(source_seq=None)
        with connection.cursor() as cursor:
            cursor.execute(migration.SOURCE_SEQ)
        assert list(Fact.objects.order_by("pk").values_list("source_seq", flat=True)) == recorded == [2, 2]


def test_both_routes_are_in_the_openapi_schema(db):
    paths = Client().get("/v1/schema", headers={"Accept": "application/json"}).json()["paths"]
    assert "application/x-ndjson" in paths["/v1/memory/import"]["post"]["requestBody"]["content"]
    assert "application/x-ndjson" in paths["/v1/memory/export"]["post"]["responses"]["200"]["content"]
    answers = paths["/v1/memory/import"]["post"]["responses"]
    answer = answers["200"]["content"]["application/json"]["schema"]
    assert set(answer["required"]) == {
        "items",
        "statuses",
        "refused",
        "redacted",
        "versions",
        "facts",
        "secrets_caught",
        "unread_items",
        "message",
    }
    assert answer["properties"]["refused"]["items"]["required"] == ["line", "field", "secret"]
    refusal = answers["400"]["content"]["application/json"]["schema"]["properties"]
    assert {"line", "field", "bound"} <= set(refusal), "a bad line's refusal names its line, field and bound"


def test_it_needs_a_key(one_note):
    assert Client().post("/v1/memory/export").status_code == 401
    assert Client().post("/v1/memory/import", data=b"", content_type="application/x-ndjson").status_code == 401


def test_at_most_two_exports_stream_at_once(one_note):
    open_ones = [one_note.post("/v1/memory/export") for _ in range(EXPORTS_AT_ONCE)]
    busy = one_note.post("/v1/memory/export")
    assert busy.status_code == 503 and busy.json()["error"] == "unavailable" and int(busy["Retry-After"]) > 0
    b"".join(open_ones[0].streaming_content)  # read to the end: its slot is given back
    assert export(one_note)
    for response in open_ones[1:]:
        response.close()


def test_an_export_is_one_snapshot(one_note):
    memory = one_note
    response = memory.post("/v1/memory/export")
    stream = iter(response.streaming_content)
    header = json.loads(next(stream))  # the snapshot is taken: items are counted

    def add_meanwhile():
        memory.add({"id": "late", "text": "Added while the export streams."}, wait=False)
        connection.close()

    adder = threading.Thread(target=add_meanwhile)
    adder.start()
    adder.join()
    lines = [json.loads(line) for line in b"".join(stream).splitlines()]
    assert len(lines) == header["items"] and "late" not in {line["item"]["id"] for line in lines}
    assert "late" in {line["item"]["id"] for line in export(memory)[1:]}


def test_an_import_body_may_pass_the_json_body_bound(api, settings):
    exported = body(_lines())
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = len(exported) - 1
    assert api.post("/v1/memory/add", {"items": [{"text": "x" * len(exported)}]}).status_code == 413
    assert import_(api, exported).status_code == 200
    too_large = import_(api, exported, **{"Content-Length": str(IMPORT_MAX_BYTES + 1)})
    assert too_large.status_code == 413 and too_large.json()["bound"] == IMPORT_MAX_BYTES


def test_an_export_holds_little_memory_whatever_the_memory_size(api, project):
    """Items come through a server-side cursor a chunk at a time: what an export holds in Python does not
    grow with the number of items (bench/export_import.py measures 100,000: docs/export-format.md "Size")."""
    api.add({"id": "first", "text": "The first note."}, wait=False)
    end_user = EndUser.objects.get(project=project, external_id="u_1")

    def grow(start: int, end: int) -> None:
        with scoped(project.pk, end_user.pk):
            Item.objects.bulk_create(
                Item(
                    end_user=end_user,
                    external_id=f"bulk-{n}",
                    kind="note",
                    at=timezone.now(),
                    text=f"Bulk note {n}: " + "words " * 60,
                )
                for n in range(start, end)
            )

    def peak() -> int:
        tracemalloc.start()
        try:
            for _ in api.post("/v1/memory/export").streaming_content:
                pass
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    grow(0, SMALL)
    small = peak()
    grow(SMALL, SMALL * GROWTH)
    assert peak() < small * 1.5, f"{GROWTH} times the items"
