"""How fast memory_add stores items, how soon they are searchable, and whether the read starves search.

Starts the real stack on this machine (gunicorn with 2 workers, a Celery worker with 2 processes, the
embedded PostgreSQL, Redis) and, through the HTTP routes:
  1. adds 500 turns in one call with `wait: true` (the call's bound: memory.limits.WAIT_SECONDS)
  2. searches that memory on an idle service (p50, p95)
  3. adds the LoCoMo dev turns (2,760 real conversation messages) to another end user in batches of 100
     (`wait: false`) on the otherwise idle service: time until all are searchable, items/s, and where the
     CPU went meanwhile; then adds them again, to a third end user, while searching the first memory at a
     user's pace: search p95 during that import against its idle p95
  4. adds one note at a time with `wait: true` on the idle service: time until searchable (p50, p95)
Then the ratio, on the same texts: the texts the read embedded per second (the import's passages and the
sentences of long ones, end to end from the first add) over the texts per second of the embedding model
alone, in this process, on a sample of the same texts, with as many threads as the machine has cores: just
before the import and again at the end (at the workers' niceness), their mean. The machine should be
otherwise idle: the load average is printed to say if it was not.

    .venv/bin/python bench/add_throughput.py [--batch 100] [--limit 2760] [--notes 20]
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")

WAIT_CALL_ITEMS = 500
IDLE_SEARCHES = 40
# How often the bench asks whether the import is read, near its end: each ask is a memory_overview (8
# statements) on the cores the read uses, so not faster than needed to time an import of about 10 s (the
# read on a fast machine, bench/README.md "Adding") within about 0.5%. Far from the end it asks less often
# (wait_until_read).
POLL_SECONDS = 0.05
SEARCH_PAUSE_SECONDS = 0.2  # between the searches made during the import: a user's pace, not a load test
BASELINE_SAMPLE = 3_000  # texts the model alone embeds (every k-th of the read's): enough for a steady rate
QUESTIONS = [
    "What did Caroline do at the support group?",
    "Where did Melanie go camping?",
    "What does Caroline want to study?",
    "When did Melanie paint a sunrise?",
    "What books does Melanie like?",
    "Who gave Caroline a necklace?",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def post(url: str, key: str, account: str, body: dict) -> dict:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {key}", "X-Twin-Account": account, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def timed(call) -> tuple[float, dict]:
    started = time.perf_counter()
    answer = call()
    return time.perf_counter() - started, answer


class Searcher(threading.Thread):
    """Searches one memory at a user's pace until stopped, keeping each request's seconds."""

    def __init__(self, search):
        super().__init__(daemon=True)
        self.search, self.stopped, self.seconds = search, threading.Event(), []

    def run(self):
        n = 0
        while not self.stopped.is_set():
            self.seconds.append(timed(lambda n=n: self.search(QUESTIONS[n % len(QUESTIONS)]))[0])
            n += 1
            self.stopped.wait(SEARCH_PAUSE_SECONDS)


def embedded_texts(title: str, text: str, author: str) -> list[str]:
    """What the read embeds for one passage (memory/read/pieces.py): the passage, titled, and the sentences
    of a long one (its context vector is mixed from two passages' vectors, not embedded)."""
    from memory.read.pieces import sentences

    return [f"{title}\n{text}" if title else text, *sentences(text, author)]


def read_texts(memory) -> list[str]:
    """The texts the read embedded for `memory`, from its passages."""
    with memory.scoped():
        return [
            text
            for passage in memory.passages().order_by("thread_id", "seq")
            for text in embedded_texts(passage.title, passage.text, passage.author)
        ]


def item_texts(items: list[dict]) -> list[str]:
    """The texts the read will embed for `items` (a message or note is one passage, stripped), before they
    are added."""
    return [
        text
        for item in items
        for text in embedded_texts(
            item.get("title") or "", item["text"].strip() or item["text"], item.get("author") or ""
        )
    ]


def model_alone(texts: list[str], threads: int) -> float:
    """Texts per second of the embedding model alone on a sample of `texts`, on `threads` threads (lanes, as a
    worker runs it: memory.model.embeddings.use_lanes)."""
    from memory.model import embeddings

    sample = texts[:: max(1, len(texts) // BASELINE_SAMPLE)]
    embeddings.use_lanes(threads)
    embeddings.embed(sample[:64])
    seconds, _ = timed(lambda: embeddings.embed(sample))
    return len(sample) / seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--limit", type=int, default=2760)
    parser.add_argument("--notes", type=int, default=20)
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings

    from accounts.models import EndUser
    from accounts.services import api_key_create, project_get_or_create
    from bench import cpu_share
    from bench.locomo_data import items as locomo_items
    from memory.selectors import Memory

    every = [row["item"] for row in locomo_items()]
    items = every[: args.limit]
    project, _ = project_get_or_create(name="Bench", owner_email="bench@example.com")
    _, key = api_key_create(project=project, access="write", name="bench")
    account = f"bench_{int(time.time())}"
    searched = f"{account}_searched"
    # The memory searched throughout: the last conversation's turns, apart from the import's.
    wait_items = [{**item, "id": f"w:{item['id']}"} for item in every[-WAIT_CALL_ITEMS:]]

    port, queue = free_port(), f"bench-{os.getpid()}"
    env = {**os.environ, "TWIN_QUEUE": queue}
    web = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "twin.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "2",
            "--threads",
            "4",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "twin",
            "worker",
            "-Q",
            queue,
            "--concurrency",
            "2",
            "--loglevel",
            "warning",
        ],
        cwd=ROOT,
        env={**env, "TWIN_PROCESS": "worker"},  # its settings, as `make run` names it
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # as systemd or `make run`
    base = f"http://127.0.0.1:{port}"

    def wait_until_read(whose: str, count: int) -> None:
        """Returns once all `count` items are stored and read. Far from the end it asks again when half of what
        is left would be read at the rate seen so far, so the asks stay off the cores the read uses; near
        the end, every POLL_SECONDS."""
        first = None
        while True:
            overview = post(f"{base}/v1/memory/overview", key, whose, {})
            left = count - overview["counts"]["items"] + overview["counts"]["unread_items"]
            if left == 0:
                return
            now = time.perf_counter()
            first = first or (now, left)
            rate = (first[1] - left) / (now - first[0]) if now > first[0] else 0
            time.sleep(max(POLL_SECONDS, min(left / 2 / rate, 5)) if rate > 0 else POLL_SECONDS)

    def search(question: str) -> dict:
        return post(f"{base}/v1/memory/search", key, searched, {"query": question})

    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        time.sleep(3)  # let the worker finish starting
        wait_seconds, answer = timed(
            lambda: post(f"{base}/v1/memory/add", key, searched, {"items": wait_items, "wait": True})
        )
        wait_searchable = answer["searchable"]
        wait_until_read(searched, len(wait_items))  # before the import, so it reads nothing of this call's
        for question in QUESTIONS:
            search(question)  # warm both web processes
        idle = [timed(lambda q=q: search(q))[0] for q in (QUESTIONS * IDLE_SEARCHES)[:IDLE_SEARCHES]]

        def import_turns(whose: str) -> tuple[float, float]:
            """Add the turns to `whose` memory in batches: (seconds until stored, seconds until searchable)."""
            started = time.perf_counter()
            for start in range(0, len(items), args.batch):
                post(f"{base}/v1/memory/add", key, whose, {"items": items[start : start + args.batch]})
            added = time.perf_counter() - started
            wait_until_read(whose, len(items))
            return added, time.perf_counter() - started

        # The read's speed on an otherwise idle machine (the ratio), then its cost to searches: the
        # same import again, to another end user, while the first memory is searched at a user's pace.
        # The model alone on the import's texts just before it, and again at the end: the machine's own speed
        # drifts by up to 10% within minutes, and the ratio is taken over the mean of the two.
        alone_before = model_alone(item_texts(items), os.cpu_count() or 1)
        before = cpu_share.snapshot()
        added, searchable = import_turns(account)
        cpu = cpu_share.describe(cpu_share.used_since(before), searchable)
        searcher = Searcher(search)
        searcher.start()
        _, searchable_searched = import_turns(f"{account}_again")
        searcher.stopped.set()
        searcher.join()
        busy = searcher.seconds

        notes, unread_notes = [], 0
        for n in range(args.notes):
            time.sleep(0.5)
            seconds, answer = timed(
                lambda n=n: post(
                    f"{base}/v1/memory/add",
                    key,
                    searched,
                    {
                        "items": [{"kind": "note", "text": f"Bench note {n}: Caroline's bike is blue, number {n}."}],
                        "wait": True,
                    },
                )
            )
            notes.append(seconds)
            unread_notes += not answer["searchable"]
    finally:
        web.terminate()
        worker.terminate()
        web.wait()
        worker.wait()

    memory = Memory(EndUser.objects.get(project=project, external_id=account))
    texts = read_texts(memory)
    os.nice(settings.READ_WORKER_NICENESS)  # the model alone at the workers' priority: like with like
    alone_after = model_alone(texts, os.cpu_count() or 1)
    alone = (alone_before + alone_after) / 2
    read_rate = len(texts) / searchable

    ms = 1000
    print(
        f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; worker niceness "
        f"{settings.READ_WORKER_NICENESS}, model threads per worker process {settings.READ_MODEL_THREADS}"
    )
    print(
        f"items: {len(items)} in batches of {args.batch}; texts the read embedded: {len(texts)} "
        f"({len(texts) / len(items):.1f} per item)"
    )
    print(f"add rate (stored, HTTP):             {len(items) / added:8.0f} items/s")
    print(f"time until all searchable:           {searchable:8.1f} s")
    print(f"  {cpu}")
    print(f"read rate, end to end:               {len(items) / searchable:8.1f} items/s")
    print(f"read's texts embedded per second:    {read_rate:8.0f} texts/s")
    print(
        f"model alone, {os.cpu_count()} threads, same texts: {alone:8.0f} texts/s  "
        f"(before the import {alone_before:.0f}, at the end {alone_after:.0f})"
    )
    print(f"ratio read / model alone:            {read_rate / alone:8.2f}")
    print(f"wait: true on {WAIT_CALL_ITEMS} turns:             {wait_seconds:8.1f} s, searchable: {wait_searchable}")
    print(
        f"one note, wait: true, idle:          p50 {percentile(notes, 0.5):.2f} s  p95 {percentile(notes, 0.95):.2f} s"
        f"  ({len(notes)} notes, {unread_notes} not searchable)"
    )
    print(
        f"search idle:                         p50 {statistics.median(idle) * ms:.0f} ms  "
        f"p95 {percentile(idle, 0.95) * ms:.0f} ms  ({len(idle)})"
    )
    print(f"time until all searchable, searched: {searchable_searched:8.1f} s")
    print(
        f"search during the import:            p50 {statistics.median(busy) * ms:.0f} ms  "
        f"p95 {percentile(busy, 0.95) * ms:.0f} ms  ({len(busy)})"
    )
    print(f"search p95 during import / idle:     {percentile(busy, 0.95) / percentile(idle, 0.95):8.2f}")


if __name__ == "__main__":
    main()
