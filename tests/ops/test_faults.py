"""Faults, on a service of this file's own (tests/own_stack.py: its own redis-server and embedded PostgreSQL,
gunicorn from gunicorn.conf.py, a Celery worker as `make run` starts it): a full pool, a statement that runs
too long, a waiting add, Redis stopped during adds, PostgreSQL restarted under searches, a worker killed in
the middle of a read. Busy or broken is an answer (503 with Retry-After), never a 500 or a hang, and nothing
added is lost or read twice. Select them with `-m faults`.
"""

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import redis

from tests.own_stack import Stack, wait_for

# One pytest worker runs them all, on one stack (`--dist loadgroup`, the Makefile's).
pytestmark = [pytest.mark.faults, pytest.mark.xdist_group("faults")]

POOL_TIMEOUT = 0.5  # the deterministic pool's wait for a connection
STATEMENT_TIMEOUT_MS = 2000  # its statement timeout (5 s in production): the held add gives up after this
SEARCHES_PER_SECOND = 10
RECOVERY_SECONDS = 10  # searches succeed again this soon after the database is back
READ_AFTER_REDIS_SECONDS = 15  # every add is read this soon after Redis is back, at the production sweep settings
ITEMS_IN_FLIGHT = 400


@pytest.fixture(scope="module")
def stack():
    own = Stack()
    try:
        yield own.start()
    finally:
        own.close()


@pytest.fixture(scope="module")
def one_connection(stack):
    """Another gunicorn whose one process has two threads (so one `wait` add may wait) and a pool of one
    connection: whoever holds it makes the rest wait."""
    return stack.web(
        WEB_WORKERS="1",
        WEB_THREADS="2",
        DB_POOL_MIN="1",
        DB_POOL_MAX="1",
        DB_POOL_TIMEOUT=str(POOL_TIMEOUT),
        DB_STATEMENT_TIMEOUT_MS=str(STATEMENT_TIMEOUT_MS),
    )


def waiting_on_locks(stack) -> int:
    """How many of the service's statements wait on a lock now."""
    with stack.postgres.connect(autocommit=True) as db:
        return db.execute(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND usename <> 'postgres'"
        ).fetchone()["n"]


def test_a_request_finding_the_pool_taken_answers_503_within_a_second(stack, one_connection):
    """The pool's one connection is held by an add waiting on a row lock the test holds: a search gets 503 with
    Retry-After within a second (HTTP and MCP alike); the held add itself gives up at the statement timeout,
    writing nothing, and its retry is stored."""
    account = "pool"
    plan = {"text": "The plan: ship on Friday.", "id": "plan"}
    # read before the row is locked: a read still under way would wait on the lock in the add's place
    stored = stack.tool(account, "add", url=one_connection, wait=True, items=[plan])
    assert stored.status == 200 and stored.body["searchable"] is True, stored
    locker = stack.postgres.connect()
    try:
        locker.execute("SELECT 1 FROM memory_item WHERE external_id = 'plan' FOR UPDATE")
        with ThreadPoolExecutor(1) as pool:
            held = pool.submit(
                stack.tool,
                account,
                "add",
                url=one_connection,
                items=[{"text": "The plan: ship on Monday.", "id": "plan"}],
            )
            wait_for(lambda: waiting_on_locks(stack) == 1, 10, "the add to wait on the row lock")
            refused = stack.tool(account, "search", url=one_connection, query="When do we ship?")
            over_mcp = stack.mcp_call(account, "memory_search", url=one_connection, query="When do we ship?")
            gave_up = held.result(timeout=30)
    finally:
        locker.rollback()
        locker.close()
    assert refused.status == 503 and refused.seconds < 1, (refused.status, refused.seconds)
    assert refused.headers["retry-after"] == "1" and refused.body["error"] == "unavailable"
    assert over_mcp.status == 503 and over_mcp.headers["retry-after"] == "1" and over_mcp.seconds < 1
    assert over_mcp.body["error"]["code"] == -32010
    request_id = over_mcp.headers["x-request-id"]
    assert over_mcp.body["error"]["data"] == {"error": "unavailable", "retry_after": 1, "request_id": request_id}
    assert gave_up.status == 503 and gave_up.body["error"] == "unavailable", gave_up
    with stack.postgres.connect() as db:  # nothing half-written: the item is as it was
        assert db.execute("SELECT text, version FROM memory_item WHERE external_id = 'plan'").fetchone() == {
            "text": plan["text"],
            "version": 1,
        }
    retried = stack.tool(
        account, "add", url=one_connection, items=[{"text": "The plan: ship on Monday.", "id": "plan"}]
    )
    assert retried.status == 200 and retried.body["items"][0]["status"] == "edited"


def test_a_waiting_add_holds_no_connection_and_answers_when_its_read_commits(stack, one_connection):
    """While a `wait` add waits for its read (held back by a lock the test holds on the passages), the pool's
    one connection serves other requests, and another `wait` add, beyond half the threads, answers at once;
    once the read commits, the waiting add answers searchable at once."""
    account = "waiting"
    subscribers = redis.Redis.from_url(stack.redis.url)
    locker = stack.postgres.connect()
    try:
        locker.execute("LOCK TABLE memory_passage IN SHARE ROW EXCLUSIVE MODE")  # no writes; reads go on
        with ThreadPoolExecutor(1) as pool:
            waiting = pool.submit(
                stack.tool,
                account,
                "add",
                url=one_connection,
                wait=True,
                items=[{"text": "Ana's cat is called Miso.", "id": "cat"}],
            )
            wait_for(lambda: waiting_on_locks(stack) == 1, 20, "the read to wait on the passages' lock")
            wait_for(lambda: subscribers.pubsub_channels("twin:read:*"), 10, "the add to listen for its read")
            search = stack.tool(account, "search", url=one_connection, query="What is the cat called?")
            assert search.status != 503 and not waiting.done(), search
            beyond = stack.tool(
                "beyond",
                "add",
                url=one_connection,
                wait=True,
                items=[{"text": "Ben's dog is called Rex.", "id": "dog"}],
            )
            assert beyond.status == 200 and beyond.body["searchable"] is False and beyond.seconds < 1, beyond
            # The held read keeps its end user's row from other writes of that memory, but lets in the new
            # items of an add to it: the add answers at once, not when the read's slice commits.
            same = stack.tool(account, "add", url=one_connection, items=[{"text": "Ana's dog is Pip.", "id": "dog"}])
            assert same.status == 200 and same.body["items"][0]["status"] == "added" and same.seconds < 1, same
            assert not waiting.done()
            locker.rollback()
            released = time.monotonic()
            answer = waiting.result(timeout=30)
    finally:
        locker.rollback()
        locker.close()
    assert answer.status == 200 and answer.body["searchable"] is True, answer
    assert time.monotonic() - released < 5  # woken by the read's notice, not by the 20 s deadline


def test_adds_while_redis_is_down_are_stored_and_answered_fast_then_read_once_it_is_back(stack):
    """20 adds with Redis stopped (every other one with wait: true): every one is stored and answered, p95
    within 200 ms and none over 1 s; once Redis is back, all are read within 15 s, with no setting changed
    for the test (the worker sweeps when it reconnects)."""
    account = "redis-down"
    for n in range(4):  # each gunicorn process has stored an add and queued its read before the clock starts
        assert stack.tool(account, "add", items=[{"text": f"Warming up {n}.", "id": f"warm{n}"}]).status == 200
        wait_for(lambda n=n: stack.read_counts(account)["read"] == n + 1, 30, "the warm-up read")  # its turn ended
    stack.redis.stop()
    answers = [
        stack.tool(
            account,
            "add",
            wait=i % 2 == 1,
            items=[{"text": f"Note {i}: the meeting moved to room {100 + i}.", "id": f"n{i}"}],
        )
        for i in range(20)
    ]
    stack.redis.start()
    back = time.monotonic()
    assert [a.status for a in answers] == [200] * 20, [a.body for a in answers]
    assert all(a.body["items"][0]["status"] == "added" for a in answers)
    seconds = sorted(a.seconds for a in answers)
    assert seconds[18] <= 0.2 and seconds[-1] < 1, [round(a.seconds, 3) for a in answers]  # p95: the 19th of 20
    deadline = READ_AFTER_REDIS_SECONDS - (time.monotonic() - back)
    wait_for(lambda: stack.read_counts(account)["read"] == 24, deadline, "every add read", stack.worker_process.log)


def test_a_database_restart_under_searches_answers_503_never_500_then_recovers(stack):
    """`pg_ctl restart -m fast` under 10 searches a second: what is in flight answers 503 with Retry-After,
    never 500; searches succeed again within 10 s, gunicorn untouched."""
    account = "restart"
    assert stack.tool(account, "add", wait=True, items=[{"text": "Ana lives in Porto.", "id": "home"}]).status == 200
    results, restarted = [], {}
    started_before = postmaster_started(stack)

    def search():
        started = time.monotonic()
        answer = stack.tool(account, "search", query="Where does Ana live?", timeout=20)
        results.append((started, answer.status, answer.headers.get("retry-after")))

    def restart():
        time.sleep(1)
        restarted["at"] = time.monotonic()
        stack.postgres.pg_ctl("-m", "fast", "restart")
        restarted["back"] = time.monotonic()

    restarter = threading.Thread(target=restart)
    with ThreadPoolExecutor(16) as pool:
        restarter.start()
        while "back" not in restarted or time.monotonic() - restarted["back"] < RECOVERY_SECONDS:
            pool.submit(search)
            time.sleep(1 / SEARCHES_PER_SECOND)
            recent = [status for started, status, _ in results if started > restarted.get("back", float("inf")) + 1]
            if len(recent) >= SEARCHES_PER_SECOND and all(status == 200 for status in recent[-SEARCHES_PER_SECOND:]):
                break
    restarter.join()
    statuses = {status for _, status, _ in results}
    assert statuses <= {200, 503}, sorted(results)
    assert all(retry == "5" or retry == "1" for _, status, retry in results if status == 503)
    assert postmaster_started(stack) > started_before  # the server really restarted under the searches
    after = [status for started, status, _ in results if started > restarted["back"]]
    assert after[-SEARCHES_PER_SECOND:] == [200] * SEARCHES_PER_SECOND, sorted(results)


def test_redis_lost_in_the_middle_of_a_read_leaves_the_worker_running_and_loses_nothing(stack):
    """Redis killed while the worker holds an unacknowledged read (acks late), back a second later: the same
    worker process reconnects and every item is read, each once."""
    account = "redis-mid-read"
    items = [{"text": f"Note {i}: I have a cat named {dog_name(i)}.", "id": f"c{i}"} for i in range(100)]
    assert stack.tool(account, "add", items=items, timeout=60).status == 200
    wait_for(lambda: stack.read_counts(account)["read"] > 0, 60, "the read to start", stack.worker_process.log)
    stack.redis.stop()
    time.sleep(1)
    stack.redis.start()
    wait_for(lambda: stack.read_counts(account)["read"] == 100, 60, "every item read", stack.worker_process.log)
    assert stack.worker_process.process.poll() is None, stack.worker_process.log.read_text()[-3000:]
    assert stack.read_counts(account)["passages"] == 100


def model_processes_of(worker_pid: int) -> set[int]:
    """The model's own processes (memory/model_process.py) the worker's pool processes started."""

    def parent(pid: str) -> int:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])

    found = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if (
                b"memory.model.process" in Path(f"/proc/{pid}/cmdline").read_bytes()
                and parent(str(parent(pid))) == worker_pid
            ):
                found.add(int(pid))
        except (OSError, IndexError):  # ended meanwhile
            continue
    return found


def test_a_worker_killed_in_the_middle_of_a_read_loses_nothing_and_reads_nothing_twice(stack):
    """SIGKILL the worker's main process while it reads 400 items; a new worker reads every one within 60 s,
    each into one passage and its facts once, and the model's processes of the killed one end with it."""
    account = "killed"
    items = [
        {"text": f"Note {i}: I have a dog named {dog_name(i)}.", "id": f"d{i}", "author": "Ana"}
        for i in range(ITEMS_IN_FLIGHT)
    ]
    assert stack.tool(account, "add", items=items, timeout=60).status == 200
    wait_for(lambda: stack.read_counts(account)["read"] > 0, 60, "the read to start", stack.worker_process.log)
    models = model_processes_of(stack.worker_process.pid)
    os.kill(stack.worker_process.pid, signal.SIGKILL)
    stack.worker_process.process.wait()
    assert stack.read_counts(account)["read"] < ITEMS_IN_FLIGHT  # killed in the middle
    assert models  # one a pool process
    wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in models), 10, "its model processes to end")
    stack.worker_process = stack.worker()
    wait_for(
        lambda: stack.read_counts(account)["read"] == ITEMS_IN_FLIGHT, 60, "every item read", stack.worker_process.log
    )
    with stack.postgres.connect() as db:
        mine = "i.end_user_id = (SELECT id FROM accounts_enduser WHERE external_id = %(account)s)"
        per_item = db.execute(
            "SELECT count(p.id) AS passages FROM memory_item i LEFT JOIN memory_passage p ON p.item_id = i.id "
            f"WHERE {mine} GROUP BY i.id",
            {"account": account},
        ).fetchall()
        facts = db.execute(
            "SELECT count(*) AS facts, count(DISTINCT (f.item_id, f.subject_key, f.attribute, f.value)) AS different "
            f"FROM memory_fact f JOIN memory_item i ON i.id = f.item_id WHERE {mine} AND f.retracted_at IS NULL",
            {"account": account},
        ).fetchone()
    assert [row["passages"] for row in per_item] == [1] * ITEMS_IN_FLIGHT
    assert facts == {"facts": ITEMS_IN_FLIGHT, "different": ITEMS_IN_FLIGHT}  # one pet each, none twice


def postmaster_started(stack):
    with stack.postgres.connect() as db:
        return db.execute("SELECT pg_postmaster_start_time() AS at").fetchone()["at"]


def dog_name(i: int) -> str:
    """A distinct capitalised name per item (Baba, Babe, ...), so each note states a fact of its own."""
    syllables = [
        "ba",
        "be",
        "bi",
        "bo",
        "da",
        "de",
        "di",
        "do",
        "ka",
        "ke",
        "ki",
        "ko",
        "ma",
        "me",
        "mi",
        "mo",
        "na",
        "ne",
        "ni",
        "no",
        "ra",
    ]
    return (syllables[i // len(syllables) % len(syllables)] + syllables[i % len(syllables)]).capitalize()
