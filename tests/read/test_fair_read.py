"""Every project gets its turn at the background read: a big import is read in slices and cannot starve
another project; one turn per project is queued at a time; a project's queued read work is capped."""

import base64
import json
import time
import uuid

import numpy as np
import pytest
import redis
from django.db import connections

from accounts.models import EndUser
from memory import fairness, tasks
from memory.limits import READ_SLICE_ITEMS
from memory.models import Item, Passage
from memory.read.pieces import context_vector
from memory.selectors import scoped
from tests import plans
from tests.conftest import TEST_QUEUE
from tests.worker import running_worker
from twin import quick_redis
from twin.celery import app as celery_app
from twin.database import DEFAULT, OWNER

BIG_ITEMS, BIG_TEXT = 3_000, 2_000
ADD_BATCH = 500  # memory_add's bound on items per call
SEARCHABLE_WITHIN_SECONDS = 10


def big_text(n: int) -> str:
    """2,000 characters of an imported document's running text."""
    words = f"import {n} ledger entry quarterly figures reconciled against the archive "
    return (words * (BIG_TEXT // len(words) + 1))[:BIG_TEXT]


def unread(project) -> int:
    with scoped(project.pk):
        return Item.objects.filter(read_at__isnull=True).count()


def purge_queue():
    with celery_app.connection_for_write() as connection:
        connection.default_channel.queue_purge(TEST_QUEUE)  # type: ignore[attr-defined]  # kombu's stubs omit it


@pytest.fixture
def no_eager():
    """Tasks go to this run's queue (no worker unless a test starts one), emptied before and after: a worker
    an earlier test stopped hands back what it held (its delayed sweep), and the broker restores what a
    killed one held once its visibility timeout passes."""
    purge_queue()
    celery_app.conf.task_always_eager = False
    try:
        yield
    finally:
        celery_app.conf.task_always_eager = True
        purge_queue()


def queued(project) -> int:
    """How many read turns of `project` wait in this run's queue. Counted by task and project, not as the
    queue's length: a message an earlier test's worker left (restored by the broker) is no turn of this
    project's."""
    broker = redis.Redis.from_url(celery_app.conf.broker_url)
    turns = 0
    for raw in broker.lrange(TEST_QUEUE, 0, -1):
        message = json.loads(raw)
        args, _kwargs, _embed = json.loads(base64.b64decode(message["body"]))
        turns += message["headers"]["task"] == tasks.read_project.name and args[0] == project.pk
    return turns


@pytest.mark.worker
def test_a_big_import_does_not_hold_up_another_projects_notes(api, charlie_api, project, other_project, no_eager):
    """Two worker processes, as `make run` starts: the import holds one of them at most, a slice at a time."""
    for start in range(0, BIG_ITEMS, ADD_BATCH):
        api.add(*({"text": big_text(n)} for n in range(start, start + ADD_BATCH)), wait=False)
    with running_worker(TEST_QUEUE, processes=2) as log:
        added = time.monotonic()
        charlie_api.add(
            *({"text": f"Charlie's note {n}: the spare key is under the blue pot."} for n in range(10)), wait=False
        )
        while unread(other_project):
            assert time.monotonic() - added < SEARCHABLE_WITHIN_SECONDS, log.read_text()[-3000:]
            time.sleep(0.2)
        waited = time.monotonic() - added
        assert charlie_api.tool("grep", pattern="blue pot").json()["found"] == 10
        assert unread(project) > BIG_ITEMS / 2, f"the import was still being read ({waited:.1f} s)"


def test_a_turn_reads_one_slice_while_another_task_waits_and_one_turn_per_project_is_queued(
    api, charlie_api, project, other_project, no_eager
):
    api.add(*({"text": f"note {n}"} for n in range(100)), wait=False)
    api.add(*({"text": f"more {n}"} for n in range(50)), wait=False)
    assert queued(project) == 1, "the second add found its project's turn queued"
    token = quick_redis.client(1).get(quick_redis.key("read-turn", project.pk))
    assert isinstance(token, str), "the project's turn is queued"
    purge_queue()
    charlie_api.add({"text": "Charlie's note"}, wait=False)  # another project's turn waits for a worker
    assert tasks.read_project(project.pk, token) == READ_SLICE_ITEMS
    assert unread(project) == 150 - READ_SLICE_ITEMS and queued(project) == 1, "back to the tail of the queue"
    with scoped(project.pk):
        oldest = Item.objects.order_by("pk")[:READ_SLICE_ITEMS]
        assert all(item.is_read for item in oldest), "oldest first"


def test_a_turn_no_task_waits_for_reads_on_slice_after_slice(api, project, no_eager):
    """No trip through the queue between its slices, and the same passages, in the same places, with the same
    context vectors as when read a slice a turn: a slice's first turn is mixed with the last one before it."""
    turns = [
        {
            "text": f"{'Caroline' if n % 2 else 'Melanie'}: turn {n} of the pottery class talk",
            "kind": "message",
            "session": "s1" if n < 100 else "s2",
            "id": f"t{n}",
        }
        for n in range(150)
    ]
    api.add(*turns, wait=False)
    token = quick_redis.client(1).get(quick_redis.key("read-turn", project.pk))
    assert isinstance(token, str), "the project's turn is queued"
    purge_queue()
    assert tasks.read_project(project.pk, token) == 150 and unread(project) == 0 and queued(project) == 0
    # index.md is drawn once the last slice is written, not only after the first ones
    assert "150 items in 2 threads, 150 passages" in api.tool("read", path="index.md").json()["text"]
    with scoped(project.pk):
        passages = {p.item.external_id: p for p in Passage.objects.select_related("item", "thread")}
    for n in range(1, 150):
        before, own = passages[f"t{n - 1}"], passages[f"t{n}"]
        if n == 100:  # a new session: its own thread, nothing before its first turn
            assert own.thread_id != before.thread_id and own.seq == 1
            continue
        assert own.thread_id == before.thread_id and own.seq == before.seq + 1
        mixed = context_vector(
            (len(before.text), np.asarray(before.embedding, np.float32)),
            len(own.text),
            np.asarray(own.embedding, np.float32),
        )
        got = np.asarray(own.context_embedding, np.float32)
        assert float(got @ mixed / np.linalg.norm(got)) > 0.999, f"turn {n}: mixed with the turn before"


def test_a_turn_that_died_with_its_worker_lapses_and_the_sweep_queues_it_again(api, project, no_eager):
    api.add({"text": "a note"}, wait=False)
    turn, client = quick_redis.key("read-turn", project.pk), quick_redis.client(1)
    dead = client.get(turn)
    assert isinstance(dead, str), "the project's turn is queued"
    with fairness.reading_turn(project.pk, dead) as held:  # a task starts reading the turn...
        assert held
    purge_queue()  # ...and its worker is killed: no heartbeat
    assert 0 < client.ttl(turn) <= fairness.RUNNING_TURN_SECONDS, "it lapses unless its task renews it"
    api.add({"text": "another"}, wait=False)
    assert queued(project) == 0, "until it lapses, the turn is the project's one"
    client.delete(turn)  # it lapses
    assert tasks.sweep_unread(older_than_seconds=0) == 2 and queued(project) == 1
    assert tasks.read_project(project.pk, dead) == 0 and unread(project) == 2, "the dead task's turn is over"


def unread_rows(project, end_user: EndUser, count: int, text: str = "waiting"):
    """Unread items stored as an add stores them, their read not yet done."""
    with scoped(project.pk, end_user.pk):
        Item.objects.bulk_create(
            Item(
                end_user=end_user,
                external_id=f"w{uuid.uuid4().hex[:12]}",
                kind="note",
                text=text,
                at="2026-01-01T00:00:00Z",
            )
            for _ in range(count)
        )


def test_an_add_past_the_projects_read_backlog_is_refused_whole(api, project, charlie_api, settings):
    settings.READ_BACKLOG_ITEMS = 5
    api.add({"text": "first"}, wait=False)  # read at once (eager): no backlog
    unread_rows(project, EndUser.objects.get(project=project, external_id="u_1"), 4)
    refused = api.tool("add", items=[{"text": "one"}, {"text": "two"}])
    assert refused.status_code == 429 and 0 < int(refused["Retry-After"]) <= 60
    body = refused.json()
    assert body["error"] == "read_backlog_full" and body["items"] == 4
    assert "Nothing was stored" in body["message"] and body["retry_after"] == int(refused["Retry-After"])
    over_mcp = api.call("memory_add", items=[{"text": "one"}, {"text": "two"}])["error"]
    assert over_mcp["code"] == -32011 and over_mcp["data"].pop("request_id")
    assert over_mcp["data"] == {"error": "read_backlog_full", "retry_after": 60}
    with scoped(project.pk):
        assert Item.objects.count() == 5, "nothing stored"
    assert api.tool("add", items=[{"text": "fits"}]).status_code == 200, "up to the cap"
    assert charlie_api.tool("add", items=[{"text": "x"}, {"text": "y"}]).status_code == 200, "another project"


def test_the_backlog_counts_characters_too(api, project, settings):
    settings.READ_BACKLOG_CHARACTERS = 1_000
    unread_rows(project, EndUser.objects.create(project=project, external_id="u_9"), 1, "x" * 900)
    assert api.tool("add", items=[{"text": "y" * 101}]).status_code == 429
    assert api.tool("add", items=[{"text": "y" * 100}]).status_code == 200


# The statistics ANALYZE leaves when every item was read (no unread row) in a few projects of a few end users.
NOTHING_UNREAD = (
    plans.relation("memory_item", reltuples="100000::real", relpages="5000::integer"),
    plans.attribute("memory_item", "read_at", null_frac="0::real"),
    *(
        plans.relation(index, reltuples="0::real", relpages="1::integer")
        for index in ("item_unread", "item_unread_by_end_user")
    ),
    plans.relation("accounts_enduser", reltuples="30::real", relpages="1::integer"),
    plans.attribute("accounts_enduser", "project_id", null_frac="0::real", n_distinct="5::real"),
)


@pytest.mark.django_db(transaction=True, databases=[DEFAULT, OWNER])
def test_the_backlog_reads_the_projects_end_users_once_whatever_the_statistics_say(project):
    """The count before every add, planned from statistics taken while nothing was unread (as after an
    ANALYZE of memories fully read): the project's end users are read once, not once an unread item."""
    for n in range(12):
        unread_rows(project, EndUser.objects.create(project=project, external_id=f"u_{n}"), 50)
    with (
        plans.statistics(*NOTHING_UNREAD, tables=("memory_item", "accounts_enduser")),
        connections[OWNER].cursor() as cursor,
    ):
        cursor.execute("SELECT prosrc FROM pg_proc WHERE proname = 'twin_read_backlog'")
        plan = plans.explain(cursor, cursor.fetchone()[0].replace("of_project", str(int(project.pk))))
        cursor.execute("SELECT items, characters FROM twin_read_backlog(%s)", [project.pk])
        counted = cursor.fetchone()
    assert (
        sum(node["Actual Loops"] for node in plans.nodes(plan) if node.get("Relation Name") == "accounts_enduser") == 1
    )
    assert counted == (600, 600 * len("waiting"))


def test_without_redis_an_add_is_stored_at_once_and_left_to_the_sweep(api, project, settings, no_eager):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    started = time.monotonic()
    answer = api.add({"text": "stored while Redis was away", "id": "away"}, wait=False)
    assert time.monotonic() - started < 1.0 and answer["items"][0]["status"] == "added"
    assert queued(project) == 0 and unread(project) == 1
    settings.REDIS_URL = settings.CELERY_BROKER_URL  # Redis is back
    celery_app.conf.task_always_eager = True
    assert tasks.sweep_unread(older_than_seconds=0) == 1 and unread(project) == 0


def test_an_item_the_read_skips_never_holds_its_projects_turn(api, project):
    """An item up to date at its version but without read_at (a row from before read_at was kept) is not
    work: the turns would otherwise take it again and again."""
    api.add({"text": "first"}, wait=False)
    end_user = EndUser.objects.get(project=project, external_id="u_1")
    with scoped(project.pk, end_user.pk):
        Item.objects.filter(end_user=end_user).update(read_at=None)
    answer = api.add({"text": "second", "id": "second"}, wait=False)  # read now, eagerly, to the end
    assert answer["items"][0]["searchable"] is True
