"""The worst an import's client can send, against the real stack on this machine, and what it costs a search.

Started by `bench/export_import.py --worst` (its own database, as that bench's). Starts gunicorn (2 processes,
4 threads), a read worker and the import's worker (one process, `-P solo`, as `make run` does, at the read's
niceness), seeds a memory to search, and measures search p50/p95 at a user's pace, idle and during:
  - bomb: a gzip of a header and `--worst-bytes` (2 GiB: IMPORT_MAX_BYTES) of newlines, about 2 MB sent
  - bombs at once: four of them from four projects together
  - ratio: a gzip just under IMPORT_RATIO_MAX that expands to `--worst-bytes` of whitespace and newlines: the
    most a gzip can make the import read
  - blank: `--worst-bytes` of newlines, plain: the largest body, read whole
For each: the bytes sent, the seconds until the request answered and until the job ended, how it ended, and
where the CPU went meanwhile.
"""

import http.client
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

from bench import cpu_share
from bench.add_throughput import free_port, percentile

ROOT = Path(__file__).resolve().parent.parent
CHUNK = 1024 * 1024
SEEDED_NOTES = 200
IDLE_SEARCHES = 40
SEARCH_PAUSE_SECONDS = 0.2  # a user's pace, not a load test
BOMBS_AT_ONCE = 4
# One space or tab in this many newlines gzips about 90 times: a little under IMPORT_RATIO_MAX, so the file is
# admitted and read to its end.
SPACING = 280
WORDS = ("garden", "meeting", "Lisbon", "flight", "project", "tea", "review", "Berlin", "invoice", "concert")
QUESTIONS = ("Where is the meeting?", "Which tea?", "When is the flight to Berlin?", "What about the invoice?")
HEADER = b'{"format": "twin-memory-export", "version": 1, "items": 0}\n'


class Stack:
    """gunicorn, a read worker and the import's worker, on this bench's database and queues."""

    def __init__(self, queue: str):
        self.port = free_port()
        env = {**os.environ, "TWIN_QUEUE": queue}
        celery = [sys.executable, "-m", "celery", "-A", "twin", "worker", "--loglevel", "warning"]
        self.processes = [
            subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "twin.wsgi", "--bind", f"127.0.0.1:{self.port}"]
                + ["--workers", "2", "--threads", "4"],
                cwd=ROOT,
                env={**env, "TWIN_PROCESS": "web"},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            ),
            subprocess.Popen(
                [*celery, "--concurrency", "1", "-n", f"read-{queue}@%h"],
                cwd=ROOT,
                env={**env, "TWIN_PROCESS": "worker"},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            ),
            subprocess.Popen(
                [*celery, "-P", "solo", "-Q", f"{queue}-import", "-n", f"import-{queue}@%h"],
                cwd=ROOT,
                env={**env, "TWIN_PROCESS": "worker"},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            ),
        ]

    def stop(self) -> None:
        """gunicorn by its pid; each worker with its session (children and the model's process too)."""
        web, *workers = self.processes
        web.terminate()
        for worker in workers:
            try:
                os.killpg(worker.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for process in self.processes:
            process.wait(timeout=60)


def request(port: int, method: str, path: str, key: str, account: str, body=None, headers=None):
    """(status, JSON answer, seconds) of one request; `body` bytes or an iterator of bytes (then its length is
    given in headers)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    started = time.perf_counter()
    connection.request(
        method,
        path,
        body=body,
        headers={"Authorization": f"Bearer {key}", "X-Twin-Account": account, **(headers or {})},
    )
    response = connection.getresponse()
    answer = json.loads(response.read() or b"{}")
    connection.close()
    return response.status, answer, time.perf_counter() - started


class Searcher(threading.Thread):
    """Searches one memory at a user's pace until stopped, keeping each request's seconds."""

    def __init__(self, search: Callable[[str], float]):
        super().__init__(daemon=True)
        self.search, self.stopped = search, threading.Event()
        self.seconds: list[float] = []

    def run(self):
        n = 0
        while not self.stopped.is_set():
            self.seconds.append(self.search(QUESTIONS[n % len(QUESTIONS)]))
            n += 1
            self.stopped.wait(SEARCH_PAUSE_SECONDS)


def gzipped(blocks: Iterator[bytes]) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: the gzip container
    return b"".join(packer.compress(block) for block in blocks) + packer.flush()


def newlines(total: int) -> Iterator[bytes]:
    """`total` bytes: the header, then newlines."""
    yield HEADER
    total -= len(HEADER)
    for start in range(0, total, CHUNK):
        yield b"\n" * min(CHUNK, total - start)


def whitespace(total: int) -> Iterator[bytes]:
    """Blank lines that gzip about 90 times: newlines with a random space or tab every SPACING bytes or so."""
    rng = random.Random(7)
    block = bytearray(b"\n" * CHUNK)
    for place in rng.sample(range(CHUNK), CHUNK // SPACING):
        block[place] = rng.choice(b" \t")
    yield HEADER
    total -= len(HEADER)
    for start in range(0, total, CHUNK):
        yield bytes(block[: min(CHUNK, total - start)])


def ms(values: list[float]) -> str:
    if not values:
        return "no searches"
    return (
        f"p50 {statistics.median(values) * 1000:.0f} ms  p95 {percentile(values, 0.95) * 1000:.0f} ms  ({len(values)})"
    )


def run(*, keys: list[str], queue: str, worst_bytes: int) -> None:
    """Start the stack, seed, and measure each case (see the module's docstring); prints as it goes."""
    stack = Stack(queue)
    port, key = stack.port, keys[0]
    try:
        for _ in range(200):
            try:
                http.client.HTTPConnection("127.0.0.1", port, timeout=1).request("GET", "/healthz")
                break
            except OSError:
                time.sleep(0.2)
        time.sleep(5)  # the workers finish starting
        notes = [
            {"id": f"s{n}", "text": f"Note {n}: " + " ".join(WORDS[(n + k) % len(WORDS)] for k in range(20))}
            for n in range(SEEDED_NOTES)
        ]
        for start in range(0, SEEDED_NOTES, 100):
            body = json.dumps({"items": notes[start : start + 100], "wait": True}).encode()
            request(port, "POST", "/v1/memory/add", key, "searched", body, {"Content-Type": "application/json"})

        def search(question: str) -> float:
            body = json.dumps({"query": question}).encode()
            return request(
                port, "POST", "/v1/memory/search", key, "searched", body, {"Content-Type": "application/json"}
            )[2]

        for question in QUESTIONS:
            search(question)
        idle = [search(QUESTIONS[n % len(QUESTIONS)]) for n in range(IDLE_SEARCHES)]
        print(f"search, idle: {ms(idle)}", flush=True)

        bomb = gzipped(newlines(worst_bytes))
        ratio = gzipped(whitespace(worst_bytes))
        cases: list[tuple[str, list[tuple[str, bytes | None]]]] = [
            ("bomb", [(key, bomb)]),
            (f"{BOMBS_AT_ONCE} bombs at once", [(keys[i], bomb) for i in range(BOMBS_AT_ONCE)]),
            (f"gzip at ratio {len(b''.join(whitespace(CHUNK))) / len(gzipped(whitespace(CHUNK))):.0f}", [(key, ratio)]),
            ("blank lines, plain", [(key, None)]),
        ]
        for label, sends in cases:
            measure(port, label, sends, search, worst_bytes)
    finally:
        stack.stop()


def measure(port: int, label: str, sends: list[tuple[str, bytes | None]], search, worst_bytes: int) -> None:
    """Send each body at once (None: `worst_bytes` of newlines, streamed), follow each job to its end while
    a user searches, and print what each cost."""
    searcher = Searcher(search)
    before = cpu_share.snapshot()
    started = time.perf_counter()
    searcher.start()
    results: list[str] = []

    def send(key: str, body: bytes | None) -> None:
        size = len(body) if body is not None else worst_bytes
        data = body if body is not None else newlines(worst_bytes)
        status, answer, seconds = request(
            port,
            "POST",
            "/v1/memory/import",
            key,
            "imported",
            data,
            {"Content-Type": "application/x-ndjson", "Content-Length": str(size), "Prefer": "respond-async"},
        )
        if status == 202:
            while answer.get("state") not in ("done", "refused", "failed"):
                time.sleep(0.2)
                answer = request(port, "GET", answer["url"], key, "imported")[1]
            ended = answer.get("error") or answer.get("answer") or {}
        else:
            ended = answer
        outcome = f"{answer.get('state', status)}: {ended.get('error', '')} {ended.get('field', '')}".strip()
        ended_after = time.perf_counter() - started
        results.append(
            f"  sent {size / 1e6:,.1f} MB, answered in {seconds:.1f} s, ended after {ended_after:.1f} s ({outcome})"
        )

    threads = [threading.Thread(target=send, args=sending) for sending in sends]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    searcher.stopped.set()
    searcher.join()
    wall = time.perf_counter() - started
    print(f"{label}:", *results, sep="\n", flush=True)
    print(f"  search during it: {ms(searcher.seconds)}", flush=True)
    print(f"  {cpu_share.describe(cpu_share.used_since(before), wall)}", flush=True)
