"""Dates the stack can hold: every date field on every route refuses what Python and psycopg cannot read back
(a UTC value outside years 1 to 9999, an offset outside -12:00 to +14:00), by field, at validation; and an
item whose read raises is retried, then marked failed, while the rest of its batch is read."""

import importlib
import json
import time
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from django.db import connection

from accounts.auth import Context
from accounts.services import end_user_get_or_create
from mcp_server import protocol as rpc
from memory.extraction.dates import find_date
from memory.limits import DATE_EARLIEST, DATE_LATEST, READ_RETRIES
from memory.models import Fact, Item
from memory.selectors import scoped
from memory.tasks import read_items
from memory.tools import BY_NAME, stdio_tools
from tests.conftest import TEST_QUEUE, stdio_answer
from tests.console import html, logged_in
from tests.worker import running_worker
from twin.celery import app as celery_app

YEAR_10000 = datetime(9999, 12, 31, 23, 59, tzinfo=timezone(timedelta(hours=-10)))  # as a row once stored it
OUT_OF_RANGE = [
    "9999-12-31T23:59:59-10:00",
    "0001-01-01T00:00:00+01:00",
    "2026-03-01T10:00:00+20:00",
    "2026-03-01T10:00:00-12:30",
    "2026-03-01T10:00:00+14:01",
]
ROUTES = [
    ("add", lambda d: {"items": [{"text": "x", "at": d}]}, "items[0].at"),
    ("add", lambda d: {"items": [{"text": "x"}, {"text": "y", "expires": d}]}, "items[1].expires"),
    ("search", lambda d: {"query": "x", "before": d}, "before"),
    ("search", lambda d: {"query": "x", "after": d}, "after"),
    ("latest", lambda d: {"after": d}, "after"),
    ("latest", lambda d: {"before": d}, "before"),
]


@pytest.mark.parametrize("route, body, field", ROUTES, ids=[f"{r}-{f}" for r, _, f in ROUTES])
def test_every_date_field_refuses_what_the_stack_cannot_hold(api, project, route, body, field):
    api.add({"text": "Something to search", "id": "seed"})
    for value in OUT_OF_RANGE:
        response = api.post(f"/v1/memory/{route}", body(value))
        assert response.status_code == 400, (value, response.content)
        answer = response.json()
        assert answer["error"] == "invalid_arguments" and answer["field"] == field
        assert value not in answer["message"]
    with scoped(project.pk):
        assert Item.objects.count() == 1


def test_mcp_refuses_it_by_field_too(api):
    answer = api.call("memory_add", items=[{"text": "x", "at": "9999-12-31T23:59:59-10:00"}])
    assert answer["error"]["code"] == -32602 and answer["error"]["data"]["field"] == "items[0].at"


def test_the_edges_are_held_and_read_back(api):
    api.add(
        {"text": "First", "id": "first", "at": "0001-01-01T00:00:00Z"},
        {"text": "Last", "id": "last", "at": "9999-12-31T23:59:59.999999Z", "expires": "9999-12-31"},
        {"text": "Far east", "id": "east", "at": "2026-03-01T00:00:00+14:00"},
    )
    for item_id in ("first", "last", "east"):
        assert api.tool("versions", id=item_id).status_code == 200
    assert api.tool("correct", id="last", text="Last, corrected").status_code == 200
    assert api.tool("latest", before="9999-12-31T23:59:59.999999Z").status_code == 200
    assert api.tool("forget", ids=["first", "last"]).json()["forgotten"] == 2


def overview(api) -> dict:
    return api.tool("overview").json()["counts"]


def test_an_item_whose_read_raises_is_marked_failed_and_its_batch_is_read(api, alice, project):
    # A row stored before dates were bounded makes its read raise (its date cannot be read back) every time.
    legacy_row(project, "bad")
    api.add({"text": "I adopted a cat called Miso.", "id": "good"}, wait=False)  # the read takes both
    assert api.tool("grep", pattern="Miso").json()["found"] == 1, "the rest of the batch is read"
    with scoped(project.pk):
        bad = Item.objects.defer("at").get(external_id="bad")  # its date cannot be read back
    assert bad.is_failed and not bad.is_read and bad.failed_reason == "DataError in at"
    assert overview(api)["failed_items"] == 1 and overview(api)["unread_items"] == 0
    page = html(logged_in(alice).get(f"/projects/{project.slug}/end-users/u_1"))
    assert "Could not be read" in page
    # Repaired (as the migration does) and edited, it is a new version and is read again.
    with scoped(project.pk):
        Item.objects.filter(pk=bad.pk).update(at=datetime(9999, 12, 31, tzinfo=UTC))
    api.add({"text": "I live in Paris.", "id": "bad", "at": "9999-12-31"})
    assert overview(api)["failed_items"] == 0
    with scoped(project.pk):
        assert Item.objects.get(external_id="bad").is_read


@pytest.mark.parametrize("at", ["9999-12-31T12:00:00Z", "0001-01-02T12:00:00Z"])
def test_a_relative_date_past_the_years_a_date_holds_is_left_unresolved_and_the_item_read(api, at):
    """ "Tomorrow" said on 9999-12-31, "last week" on 0001-01-02: the date they name cannot be held, so it is
    left unresolved, as a date that is no date, and the item is read (it failed its read every time before,
    and a day named without its year looped for ever)."""
    api.add(
        {"text": "I fly to Lisbon tomorrow.", "id": "tomorrow", "at": at},
        {"text": "I moved to Paris last week.", "id": "week", "at": at},
        {"text": "I will move to Porto next year.", "id": "year", "at": at},
        {"text": "I will see Ana on March 3.", "id": "march", "at": at},
        {"text": "I met Ana on 3 March.", "id": "met", "at": at},
    )
    assert overview(api)["failed_items"] == 0 and overview(api)["unread_items"] == 0
    for word in ("Lisbon", "Paris", "Porto", "see Ana", "met Ana"):
        assert api.tool("grep", pattern=word).json()["found"] == 1, word
    assert find_date("I fly to Lisbon tomorrow.", date(9999, 12, 31)) == (None, None, "")
    assert find_date("I will see Ana on March 3.", date(9999, 12, 31), "future") == (None, None, "")
    assert find_date("I met Ana on 3 March.", date(1, 1, 2), "past") == (None, None, "")
    assert find_date("tomorrow, or yesterday", date(9999, 12, 31))[0] == date(9999, 12, 30), "the next one is read"


def test_a_row_stored_before_dates_were_bounded_fails_by_field(api, project):
    end_user = end_user_get_or_create(project=project, external_id="u_1")
    legacy = legacy_row(project)
    with scoped(project.pk, end_user.pk):
        fine = Item.objects.create(
            end_user=end_user,
            external_id="fine",
            kind="note",
            text="Readable",
            at=datetime(2026, 1, 1, tzinfo=UTC),
        )
    read_items.delay(end_user.pk, [legacy.pk, fine.pk])
    with scoped(project.pk, end_user.pk):
        assert Item.objects.get(pk=fine.pk).is_read
        assert Item.objects.filter(pk=legacy.pk).values_list("failed_reason", flat=True).get() == "DataError in at"
    assert overview(api)["failed_items"] == 1


@pytest.mark.worker
def test_a_real_worker_retries_with_backoff_then_marks_it_failed(api, project):
    celery_app.conf.task_always_eager = False
    try:
        with running_worker(TEST_QUEUE, READ_RETRY_BACKOFF_SECONDS="0.1") as log:
            legacy_row(project, "bad")
            api.add({"text": "I adopted a cat called Miso.", "id": "good"}, wait=False)  # the read takes both
            deadline = time.monotonic() + 30
            while overview(api)["failed_items"] == 0:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)
            text = log.read_text()
    finally:
        celery_app.conf.task_always_eager = True
    with scoped(project.pk):
        bad, good = Item.objects.defer("at").get(external_id="bad"), Item.objects.get(external_id="good")
    retried = [line for line in text.splitlines() if "memory.tasks.read_items[" in line and line.endswith("received")]
    assert len(retried) == READ_RETRIES and f"Marked 1 items failed after {READ_RETRIES} retries" in text
    assert good.is_read and bad.failed_reason == "DataError in at"


def test_the_29th_of_february_named_without_its_year_is_read_in_any_year(api):
    """A plan for 29 February made after it, or a memory of it told before it: the day lands in the next
    (or last) leap year instead of failing the read (2025 has no 29 February)."""
    api.add(
        {"text": "I am moving to Lisbon on Feb 29.", "id": "plan", "at": "2024-03-05T10:00:00Z"},
        {"text": "I got married on 29 February.", "id": "wedding", "at": "2024-02-10T10:00:00Z"},
    )
    assert overview(api)["failed_items"] == 0 and overview(api)["unread_items"] == 0
    assert find_date("see you on Feb 29", date(2024, 3, 5), "future")[0] == date(2028, 2, 29)
    assert find_date("we met on 29 February", date(2024, 2, 10), "past")[0] == date(2020, 2, 29)


def legacy_row(project, external_id="old"):
    """An item stored before dates were bounded: 23:59 on 9999-12-31 at -10:00, year 10000 in UTC."""
    end_user = end_user_get_or_create(project=project, external_id="u_1")
    with scoped(project.pk, end_user.pk):
        return Item.objects.create(end_user=end_user, external_id=external_id, kind="note", text="x", at=YEAR_10000)


@pytest.mark.parametrize(
    "tool, arguments, field",
    [
        ("add", {"items": [{"text": "new"}, {"text": "x, edited", "id": "old"}], "wait": False}, "items[1].id"),
        ("versions", {"id": "old"}, "id"),
        ("correct", {"id": "old", "text": "x, corrected"}, "id"),
    ],
)
def test_a_row_stored_before_dates_were_bounded_is_refused_by_field_not_a_500(api, project, tool, arguments, field):
    legacy_row(project)
    response = api.post(f"/v1/memory/{tool}", arguments)
    assert response.status_code == 409, response.content
    assert response.json()["error"] == "unreadable_item" and response.json()["field"] == field
    assert "old" not in response.json()["message"]
    if BY_NAME[f"memory_{tool}"].mcp:
        over_mcp = api.call(f"memory_{tool}", **arguments)["result"]
        assert over_mcp["isError"] is True and json.loads(over_mcp["content"][0]["text"])["field"] == field
    with scoped(project.pk):
        assert Item.objects.count() == 1, "nothing stored beside it"


def test_a_row_stored_before_dates_were_bounded_can_be_forgotten_by_id(api, project):
    legacy_row(project)
    api.add({"text": "Readable", "id": "fine"})
    answer = api.tool("forget", ids=["old"]).json()
    assert answer["forgotten"] == 1 and answer["ids"] == ["old"]
    with scoped(project.pk):
        assert list(Item.objects.values_list("external_id", flat=True)) == ["fine"]


def test_the_migration_makes_rows_stored_before_dates_were_bounded_readable_and_reads_them_again(api, project):
    api.add({"text": "Edited once", "id": "edited"}, {"text": "Never expires", "id": "plain"})
    api.add({"text": "Edited twice", "id": "edited"})
    legacy = legacy_row(project)
    read_items.delay(legacy.end_user_id, [legacy.pk])  # fails, as it did before the migration
    with scoped(project.pk):
        assert Item.objects.filter(pk=legacy.pk, failed_version=1).exists()
    migration = importlib.import_module("memory.migrations.0015_readable_dates")
    with scoped(project.pk), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory_item SET at = '0001-01-01 00:00:00+00'::timestamptz - interval '1 hour', "
            "expires = '10000-06-01 00:00:00+00' WHERE external_id = 'edited'"
        )
        cursor.execute("UPDATE memory_itemversion SET replaced_at = '10000-01-01 00:00:00+00'")
        cursor.execute(migration.CLAMP_ITEMS)
        cursor.execute(migration.CLAMP_VERSIONS)
        rows = {item.external_id: item for item in Item.objects.all()}
    assert rows["old"].at == DATE_LATEST and not rows["old"].is_failed and not rows["old"].is_read
    assert (rows["edited"].at, rows["edited"].expires) == (DATE_EARLIEST, DATE_LATEST)
    assert rows["plain"].expires is None and rows["plain"].is_read, "a readable row is let be"
    assert api.tool("versions", id="edited").json()["versions"][0]["replaced_at"] == DATE_LATEST.isoformat()
    assert api.tool("correct", id="old", text="x, corrected").status_code == 200
    assert api.add({"text": "y", "id": "old"}, wait=False)["items"][0]["status"] == "edited"
    read_items.delay(legacy.end_user_id, [legacy.pk])
    assert overview(api)["failed_items"] == 0 and overview(api)["unread_items"] == 0


def _import_line(change) -> bytes:
    line = {
        "item": {"id": "n1", "text": "I live in Porto.", "at": "2024-01-01"},
        "version": 2,
        "read": False,
        "versions": [{"version": 1, "text": "I live in Braga.", "replaced_at": "2024-01-01"}],
        "facts": [
            {
                "subject": "u_1",
                "attribute": "home_city",
                "kind": "value",
                "value": "Porto",
                "valid_from": "2024-01-01",
                "stated_at": "2024-01-01",
                "recorded_at": "2024-01-01",
                "source": {"item": "n1"},
            }
        ],
    }
    change(line)
    header = {"format": "twin-memory-export", "version": 1, "items": 1}
    return (json.dumps(header) + "\n" + json.dumps(line) + "\n").encode()


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda line: line["facts"][0].update(valid_from="9999-12-31T23:59:59-10:00"), "facts[0].valid_from"),
        (lambda line: line["facts"][0].update(retracted_at="2026-03-01T10:00:00+20:00"), "facts[0].retracted_at"),
        (lambda line: line["versions"][0].update(replaced_at="0001-01-01T00:00:00+01:00"), "versions[0].replaced_at"),
        (lambda line: line["item"].update(expires="9999-12-31T23:59:59-10:00"), "item.expires"),
    ],
    ids=["valid_from", "retracted_at", "replaced_at", "expires"],
)
def test_an_import_line_refuses_what_the_stack_cannot_hold_by_line_and_field(api, project, change, field):
    assert (
        api.client.post(
            "/v1/memory/import",
            data=_import_line(lambda line: None),
            headers=api.headers(),
            content_type="application/x-ndjson",
        ).status_code
        == 200
    ), "the line as it is is read"
    api.tool("forget", all=True)
    refused = api.client.post(
        "/v1/memory/import", data=_import_line(change), headers=api.headers(), content_type="application/x-ndjson"
    )
    assert refused.status_code == 400, refused.content
    assert (refused.json()["error"], refused.json()["line"], refused.json()["field"]) == ("invalid_import", 2, field)
    assert not any(value in refused.content.decode() for value in OUT_OF_RANGE), "never echoes the value"
    with scoped(project.pk):
        assert not Item.objects.exists() and not Fact.objects.exists()


def test_recall_refuses_an_as_of_the_stack_cannot_hold_by_field(read_key):
    context = Context(project=read_key[0].project, account="u_1", access="read")
    session = rpc.Session(context=context, tools=stdio_tools(context), surface="stdio")
    for value in OUT_OF_RANGE:
        answer = stdio_answer(
            session,
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "memory_recall", "arguments": {"question": "Where do I live?", "as_of": value}},
                }
            ),
        )
        assert answer["error"]["code"] == -32602 and answer["error"]["data"]["field"] == "as_of", answer
        assert value not in json.dumps(answer)
