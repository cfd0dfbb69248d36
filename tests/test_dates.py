"""Dates the stack can hold: every date field on every route refuses what Python and psycopg cannot read back
(a UTC value outside years 1 to 9999, an offset outside -12:00 to +14:00), by field, at validation; and an
item whose read raises is retried, then marked failed, while the rest of its batch is read."""

import time
from datetime import date, datetime, timedelta, timezone

import pytest

from accounts.services import end_user_get_or_create
from memory.extraction.dates import find_date
from memory.limits import READ_RETRIES
from memory.models import Item
from memory.selectors import scoped
from memory.tasks import read_items
from tests.conftest import TEST_QUEUE
from tests.console import html, logged_in
from tests.worker import running_worker
from twin.celery import app as celery_app

OUT_OF_RANGE = ["9999-12-31T23:59:59-10:00", "0001-01-01T00:00:00+01:00", "2026-03-01T10:00:00+20:00",
                "2026-03-01T10:00:00-12:30", "2026-03-01T10:00:00+14:01"]
ROUTES = [("add", lambda d: {"items": [{"text": "x", "at": d}]}, "items[0].at"),
          ("add", lambda d: {"items": [{"text": "x"}, {"text": "y", "expires": d}]}, "items[1].expires"),
          ("search", lambda d: {"query": "x", "before": d}, "before"),
          ("search", lambda d: {"query": "x", "after": d}, "after"),
          ("latest", lambda d: {"after": d}, "after"),
          ("latest", lambda d: {"before": d}, "before")]


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
    api.add({"text": "First", "id": "first", "at": "0001-01-01T00:00:00Z"},
            {"text": "Last", "id": "last", "at": "9999-12-31T23:59:59.999999Z", "expires": "9999-12-31"},
            {"text": "Far east", "id": "east", "at": "2026-03-01T00:00:00+14:00"})
    for item_id in ("first", "last", "east"):
        assert api.tool("versions", id=item_id).status_code == 200
    assert api.tool("correct", id="last", text="Last, corrected").status_code == 200
    assert api.tool("latest", before="9999-12-31T23:59:59.999999Z").status_code == 200
    assert api.tool("forget", ids=["first", "last"]).json()["forgotten"] == 2


def overview(api) -> dict:
    return api.tool("overview").json()["counts"]


def test_an_item_whose_read_raises_is_marked_failed_and_its_batch_is_read(api, alice, project):
    # A relative date past 9999-12-31 makes the read raise (in fact extraction) every time it is tried.
    saved = api.add({"text": "I will move to Paris next year.", "id": "bad", "at": "9999-12-31"},
                    {"text": "I adopted a cat called Miso.", "id": "good"}, wait=False)
    assert [i["status"] for i in saved["items"]] == ["added", "added"]
    assert api.tool("grep", pattern="Miso").json()["found"] == 1, "the rest of the batch is read"
    with scoped(project.pk):
        bad = Item.objects.get(external_id="bad")
    assert bad.is_failed and not bad.is_read and bad.failed_reason == "ValueError in facts"
    assert overview(api)["failed_items"] == 1 and overview(api)["unread_items"] == 0
    page = html(logged_in(alice).get(f"/projects/{project.slug}/end-users/u_1"))
    assert "Could not be read" in page
    # Edited, it is a new version and is read again.
    api.add({"text": "I live in Paris.", "id": "bad", "at": "9999-12-31"})
    assert overview(api)["failed_items"] == 0
    with scoped(project.pk):
        assert Item.objects.get(external_id="bad").is_read


def test_a_row_stored_before_dates_were_bounded_fails_by_field(api, project):
    end_user = end_user_get_or_create(project=project, external_id="u_1")
    year_10000 = datetime(9999, 12, 31, 23, 59, tzinfo=timezone(timedelta(hours=-10)))
    with scoped(project.pk, end_user.pk):
        legacy = Item.objects.create(end_user=end_user, external_id="old", kind="note", text="x", at=year_10000)
        fine = Item.objects.create(end_user=end_user, external_id="fine", kind="note", text="Readable",
                                   at=datetime(2026, 1, 1, tzinfo=timezone.utc))
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
            api.add({"text": "I will move to Paris next year.", "id": "bad", "at": "9999-12-31"},
                    {"text": "I adopted a cat called Miso.", "id": "good"}, wait=False)
            deadline = time.monotonic() + 30
            while overview(api)["failed_items"] == 0:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)
            text = log.read_text()
    finally:
        celery_app.conf.task_always_eager = True
    with scoped(project.pk):
        bad, good = Item.objects.get(external_id="bad"), Item.objects.get(external_id="good")
    assert text.count(f"The read of item {bad.pk} raised: ValueError in facts") == 1 + READ_RETRIES
    assert good.is_read and bad.failed_reason == "ValueError in facts"


def test_the_29th_of_february_named_without_its_year_is_read_in_any_year(api):
    """A plan for 29 February made after it, or a memory of it told before it: the day lands in the next
    (or last) leap year instead of failing the read (2025 has no 29 February)."""
    api.add({"text": "I am moving to Lisbon on Feb 29.", "id": "plan", "at": "2024-03-05T10:00:00Z"},
            {"text": "I got married on 29 February.", "id": "wedding", "at": "2024-02-10T10:00:00Z"})
    assert overview(api)["failed_items"] == 0 and overview(api)["unread_items"] == 0
    assert find_date("see you on Feb 29", date(2024, 3, 5), "future")[0] == date(2028, 2, 29)
    assert find_date("we met on 29 February", date(2024, 2, 10), "past")[0] == date(2020, 2, 29)
