"""The background read in a real worker: reading, retrying, and nothing lost when Redis is down."""

import json
import os
import subprocess
import sys
import time

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from memory.models import Item, Passage
from memory.selectors import scoped
from memory.tasks import read_items
from tests.conftest import TEST_QUEUE
from tests.worker import ROOT, running_worker
from twin.celery import app as celery_app

pytestmark = pytest.mark.worker


@pytest.fixture
def worker(api):
    celery_app.conf.task_always_eager = False
    try:
        with running_worker(TEST_QUEUE, DB_LOCK_TIMEOUT_MS="300") as log:
            yield log
    finally:
        celery_app.conf.task_always_eager = True


def wait_until_read(project, external_id: str, seconds: float = 30) -> Item:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with scoped(project.pk):
            item = Item.objects.filter(external_id=external_id).first()
        if item and item.is_read:
            return item
        time.sleep(0.1)
    raise AssertionError(f"{external_id} was not read within {seconds} s")


def test_a_worker_reads_what_was_added(api, project, worker):
    answer = api.add({"text": "Read by a real worker", "id": "w1", "kind": "document"}, wait=True)
    assert answer["items"][0]["searchable"] is True
    with scoped(project.pk):
        passage = Passage.objects.get(item__external_id="w1")
    assert passage.embedding is not None and passage.model
    assert api.tool("search", query="real worker").json()["hits"][0]["item_ids"] == ["w1"]


def test_a_failed_read_is_retried_until_it_succeeds(api, project, worker):
    db = connection.settings_dict
    blocker = psycopg.connect(
        dbname=db["NAME"], user=db["USER"], password=db["PASSWORD"] or None, host=db["HOST"], port=db["PORT"] or None
    )
    blocker.execute("LOCK TABLE memory_passage IN ACCESS EXCLUSIVE MODE")  # the read cannot write passages
    try:
        answer = api.add({"text": "Read after a retry", "id": "r1"}, wait=False)
        assert answer["items"][0]["searchable"] is False
        deadline = time.monotonic() + 20
        while "Retry in" not in worker.read_text():
            assert time.monotonic() < deadline, worker.read_text()
            time.sleep(0.1)
        with scoped(project.pk):
            assert not Item.objects.get(external_id="r1").is_read
    finally:
        blocker.rollback()
        blocker.close()
    wait_until_read(project, "r1")
    assert api.tool("grep", pattern="after a retry").json()["found"] == 1


def test_reading_twice_changes_nothing(api, project):
    api.add({"text": "Once only", "id": "o1"}, {"text": "Twice", "id": "o2", "kind": "message", "session": "s"})
    with scoped(project.pk):
        before = list(Passage.objects.order_by("pk").values("pk", "path", "text", "item_ids"))
        pks = list(Item.objects.values_list("pk", flat=True))
        end_user = Item.objects.get(external_id="o1").end_user_id
        Item.objects.update(read_version=0)  # as if the first read had been lost after writing
    read_items(end_user, pks)
    read_items(end_user, pks)
    with scoped(project.pk):
        after = list(Passage.objects.order_by("path").values("path", "text", "item_ids"))
    assert after == sorted(({k: v for k, v in p.items() if k != "pk"} for p in before), key=lambda p: str(p["path"]))


def test_one_read_of_several_threads_old_and_new_puts_each_item_after_the_last_of_its_own(api, project):
    """A read's threads are locked (and made) together: a session begun by an earlier read goes on where it
    left off, new sessions and a note's run start at their first place, each thread made once."""
    api.add(*({"text": f"Old session, turn {n}", "id": f"a{n}", "kind": "message", "session": "a"} for n in (1, 2)))
    api.add(
        {"text": "Old session, turn 3", "id": "a3", "kind": "message", "session": "a"},
        {"text": "New session b, turn 1", "id": "b1", "kind": "message", "session": "b"},
        {"text": "A note on its own", "id": "n1", "kind": "note"},
        {"text": "New session c, turn 1", "id": "c1", "kind": "message", "session": "c"},
        {"text": "New session b, turn 2", "id": "b2", "kind": "message", "session": "b"},
    )
    with scoped(project.pk):
        places = {p.item_ids[0]: (p.thread.key, p.seq) for p in Passage.objects.select_related("thread")}
        threads = sorted(Passage.objects.values_list("thread__key", flat=True).distinct())
    assert places == {
        "a1": ("session:a", 1),
        "a2": ("session:a", 2),
        "a3": ("session:a", 3),
        "b1": ("session:b", 1),
        "b2": ("session:b", 2),
        "c1": ("session:c", 1),
        "n1": ("item:n1", 1),
    }
    assert threads == ["item:n1", "session:a", "session:b", "session:c"]


def test_nothing_is_lost_while_redis_is_down(api, project, write_key):
    """The add answers and stores with no broker; the next worker to start finds and reads the items."""
    script = (
        "import json; from django.test import Client; "
        "r = Client().post('/v1/memory/add', json.dumps({'items': [{'text': 'Saved while Redis was down', "
        "'id': 'down1'}]}), content_type='application/json', "
        f"headers={{'Authorization': 'Bearer {write_key[1]}', 'X-Twin-Account': 'u_1'}}); "
        "print(json.dumps({'status': r.status_code, 'body': r.json()}))"
    )
    env = {
        **os.environ,
        "REDIS_URL": "redis://127.0.0.1:1/0",
        "TWIN_DB_NAME": settings.DATABASES["default"]["NAME"],
        "TWIN_QUEUE": TEST_QUEUE,
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert answer["status"] == 200, result.stderr
    assert answer["body"]["items"] == [{"id": "down1", "status": "added", "searchable": False}]
    with scoped(project.pk):
        assert not Item.objects.get(external_id="down1").is_read
    celery_app.conf.task_always_eager = False
    try:
        with running_worker(TEST_QUEUE):  # Redis is back; a worker starts and sweeps
            wait_until_read(project, "down1")
    finally:
        celery_app.conf.task_always_eager = True
    assert api.tool("grep", pattern="Redis was down").json()["found"] == 1
