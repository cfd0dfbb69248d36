"""Writes at the same moment each get a definite answer: ten adds of one new id through the HTTP surface in
real threads, and forget all while a read is writing the passages of the memory it erases."""

import threading
import time
from datetime import timedelta

from django.db import connection, connections
from django.utils import timezone

from accounts.models import EndUser
from memory.models import Item, Passage, Thread
from memory.selectors import named_rows, scoped
from memory.tasks import read_items

CALLERS = 10
WAIT_SECONDS = 20


def in_threads(count: int, work) -> list:
    """Run work(i) in `count` threads released together; each closes its own database connection."""
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def run(i):
        try:
            barrier.wait(timeout=WAIT_SECONDS)
            results[i] = work(i)
        except Exception as error:  # noqa: BLE001 - reported to the test below
            results[i] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=2 * WAIT_SECONDS)
    return results


def test_ten_adds_of_one_new_id_each_get_a_definite_answer(api, project):
    responses = in_threads(
        CALLERS, lambda i: api.as_account("u_1").tool("add", items=[{"text": f"Version {i} of the plan", "id": "plan"}])
    )
    assert [getattr(r, "status_code", r) for r in responses] == [200] * CALLERS
    statuses = sorted(r.json()["items"][0]["status"] for r in responses)
    assert statuses.count("added") == 1 and set(statuses) <= {"added", "edited", "unchanged"}, statuses
    with scoped(project.pk):
        item = Item.objects.get(external_id="plan")
    assert item.version == 1 + statuses.count("edited")


def test_an_add_marks_its_end_user_active_to_the_minute(api, project):
    """The console's last activity: set by the first add, kept by adds within the minute (a read of the memory
    holds the end user's row, so rewriting it each time made adds wait), set again by a later add."""
    api.add({"text": "First note.", "id": "a"})
    first = EndUser.objects.get(project=project, external_id="u_1").last_active_at
    assert first is not None and timezone.now() - first < timedelta(seconds=30)
    api.add({"text": "Second note.", "id": "b"})
    assert EndUser.objects.get(project=project, external_id="u_1").last_active_at == first
    EndUser.objects.filter(project=project, external_id="u_1").update(last_active_at=first - timedelta(minutes=2))
    api.add({"text": "Third note.", "id": "c"})
    last = EndUser.objects.get(project=project, external_id="u_1").last_active_at
    assert last is not None and last >= first


def _waiting_on_locks(count: int) -> None:
    """Until `count` other backends wait on a lock (so each step below has reached its place)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        with connection.cursor() as cursor:
            # This transaction stays open: drop its statistics snapshot to see the others now.
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT count(*) AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()"
            )
            if named_rows(cursor)[0]["waiting"] >= count:
                return
        assert time.monotonic() < deadline, "the read and the forget never met"
        time.sleep(0.05)


def test_forget_all_during_a_read_succeeds_and_leaves_nothing(api, project):
    api.add({"text": "I live in Lisbon.", "id": "home", "kind": "message", "session": "s1"})
    with scoped(project.pk):
        item = Item.objects.get(external_id="home")
        Item.objects.filter(pk=item.pk).update(read_version=0)  # its read is due again, as after an edit
    outcome: dict = {}
    # The read takes its item, then waits on this transaction's lock of its thread, in the middle of writing
    # its passages; the forget waits on the read. Leaving the scope lets the read go on, then the forget.
    with scoped(project.pk):
        assert len(Thread.objects.select_for_update()) == 1, "the item's thread is locked"
        reader = threading.Thread(
            target=lambda: outcome.update(read=_run(lambda: read_items(item.end_user_id, [item.pk])))
        )
        reader.start()
        _waiting_on_locks(1)
        forgetter = threading.Thread(target=lambda: outcome.update(forget=_run(lambda: api.tool("forget", all=True))))
        forgetter.start()
        _waiting_on_locks(2)
    reader.join(timeout=WAIT_SECONDS)
    forgetter.join(timeout=WAIT_SECONDS)
    assert not isinstance(outcome["read"], Exception), outcome["read"]
    assert outcome["forget"].status_code == 200, outcome["forget"].content
    assert outcome["forget"].json() == {
        "forgotten": 1,
        "end_user": "erased",
        "erased": {"items": 1, "versions": 0, "passages": 1, "facts": 2},
    }
    assert not EndUser.objects.filter(external_id="u_1").exists()
    with scoped(project.pk):
        assert not Passage.objects.exists() and not Thread.objects.exists() and not Item.objects.exists()


def _run(work):
    try:
        return work()
    except Exception as error:  # noqa: BLE001 - reported to the test
        return error
    finally:
        connections.close_all()
