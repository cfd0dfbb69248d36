"""The load benchmark: N concurrent MCP clients against the real stack, every answer checked for leaks.

Starts the stack as `make run` does (gunicorn from gunicorn.conf.py when the checkout has one, else the
2 workers x 8 threads of the code before it; a Celery worker of WORKER_CONCURRENCY processes, 2 by default,
and the beat) on a database of its own (`twin_load` on the embedded server: development data untouched),
with a queue and cache prefix of its own;
or takes --url of a running service (its projects and keys are then made in the database these settings
name, which must be that service's).

Two projects. Client i owns end user `user-<i // 2>` in project i % 2 (the same end-user ids in both, so a
slip between tenants would show), with a key of its own and a secret word in its notes. Each client:
initialize, memory_add its note with wait: true, then until the phase ends, rounds of memory_search,
memory_grep, memory_add without wait, memory_search, memory_grep, and every WAIT_EVERY-th round an add with
wait. The search and grep ask what every client's notes answer ("my secret word"), so a tenancy slip would
surface others' notes: a leak is another client's word in an answer (its echo of the question left out).

After a warm-up (4 clients for 5 s, not reported: the web processes load the model), phases of 1, 10, 50
and 200 clients, --seconds each, in one run: per tool (memory_add with and without wait
apart) p50/p95/p99, throughput, errors by kind, leaks. Then at 1 client the paired comparison: the same
memory_grep over MCP and over /v1/memory/grep, alternating which goes first, --pairs pairs: the median of
the paired differences is what MCP adds.

The bench's two projects get rate limits of RATE_LIMIT_MAX (so a single fast client measures the service,
not its own budget of 600 a minute); --default-limits keeps the defaults.

    .venv/bin/python bench/load.py [--quick] [--seconds 30] [--clients 1,10,50,200] [--pairs 500] [--url URL]
"""

import argparse
import asyncio
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")
os.environ.setdefault("TWIN_PROCESS", "command")
VAR_DIR = Path(os.environ.get("TWIN_VAR_DIR", ROOT / "var"))
DB_NAME = "twin_load"
PROJECTS = ("Load bench A", "Load bench B")
WAIT_EVERY = 8  # one add in this many rounds waits until searchable, as an assistant sometimes asks
FULL = {"seconds": 30, "pairs": 500}
QUICK = {"seconds": 8, "pairs": 200}
WARM_UP = {"clients": 4, "seconds": 5}  # loads the model in the web processes before anything is measured
START_SECONDS = 90  # for the web server and the worker to come up

from bench.load_client import Http, McpClient, Tally  # noqa: E402 - after the project root is on the path


def setup_database():
    """Django on the bench's own database, migrated (as search_latency.py does)."""
    if not os.environ.get("DATABASE_URL"):
        from twin import database_setup

        database_setup.set_up_embedded(VAR_DIR, DB_NAME)
        os.environ["TWIN_DB_NAME"] = DB_NAME
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def make_clients(count: int, default_limits: bool) -> list[dict]:
    """Keys, end users and secret words for `count` clients in the two projects."""
    from accounts.ratelimit import RATE_LIMIT_MAX
    from accounts.services import api_key_create, project_get_or_create, project_set_rate_limits

    projects = [project_get_or_create(name=name, owner_email="load-bench@example.com")[0] for name in PROJECTS]
    for project in projects:
        limit = None if default_limits else RATE_LIMIT_MAX
        project_set_rate_limits(project=project, per_credential=limit, per_end_user=limit)
    run = secrets.token_hex(3)
    return [
        {
            "key": api_key_create(project=projects[i % 2], access="write", name=f"load {run} {i}")[1],
            "account": f"user-{run}-{i // 2}",
            "word": f"sw{secrets.token_hex(5)}",
        }
        for i in range(count)
    ]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_stack(logs: Path) -> tuple[str, list[subprocess.Popen]]:
    """gunicorn and a Celery worker (WORKER_CONCURRENCY processes, with the beat), as `make run` starts them."""
    port, tag = free_port(), f"load-{os.getpid()}"
    env = {**os.environ, "TWIN_QUEUE": tag, "TWIN_CACHE_PREFIX": tag}
    web = [sys.executable, "-m", "gunicorn", "twin.wsgi", "--bind", f"127.0.0.1:{port}"]
    web += ["-c", "gunicorn.conf.py"] if (ROOT / "gunicorn.conf.py").exists() else ["--workers", "2", "--threads", "8"]
    worker = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "twin",
        "worker",
        "-B",
        "--loglevel",
        "info",
        "--schedule",
        str(logs / "celerybeat-schedule"),
    ]
    processes = [
        subprocess.Popen(
            command,
            cwd=ROOT,
            env={**env, "TWIN_PROCESS": kind},
            stdout=(logs / f"{kind}.log").open("w"),
            stderr=subprocess.STDOUT,
        )
        for kind, command in (("web", web), ("worker", worker))
    ]
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            urllib.request.urlopen(f"{base}/healthz", timeout=2)
            if "ready." in (logs / "worker.log").read_text():
                return base, processes
        except OSError:
            pass
        if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
            stop(processes)
            sys.exit(f"The stack did not start; logs in {logs}")
        time.sleep(0.3)


def stop(processes):
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


async def run_client(client: McpClient, note_id: str, deadline: float):
    """One assistant's session: its note with wait, then rounds of asking and adding until `deadline`."""
    await client.initialize()
    note = {"text": f"My secret word is {client.word}.", "id": note_id}
    await client.call("memory_add (wait)", "memory_add", {"items": [note], "wait": True})
    rounds = 0
    while time.perf_counter() < deadline:
        rounds += 1
        question = {"query": "What is my secret word?"}
        await client.call("memory_search", "memory_search", question)
        await client.call("memory_grep", "memory_grep", {"pattern": "secret word", "limit": 10})
        extra = {
            "text": f"Round {rounds}: I said my secret word, {client.word}, again.",
            "kind": "message",
            "session": note_id,
        }
        if rounds % WAIT_EVERY:
            await client.call("memory_add", "memory_add", {"items": [extra]})
        else:
            await client.call("memory_add (wait)", "memory_add", {"items": [extra], "wait": True})
        await client.call("memory_search", "memory_search", question)
        await client.call("memory_grep", "memory_grep", {"pattern": client.word})
    await client.close()


async def phase(base: str, clients: list[dict], count: int, seconds: float) -> tuple[Tally, float, float]:
    """`count` clients for `seconds`; the tally, the phase's start and its deadline (perf_counter). Clients
    start no round after the deadline but finish the one they are in: that drain is timed, not counted."""
    tally = Tally()
    mcp = [McpClient(base, c["key"], c["account"], c["word"], tally) for c in clients[:count]]
    started = time.perf_counter()
    deadline = started + seconds
    await asyncio.gather(*(run_client(m, f"secret-{count}-{i}", deadline) for i, m in enumerate(mcp)))
    return tally, started, deadline


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def report(count: int, tally: Tally, started: float, deadline: float) -> float:
    """Print the phase's figures; returns its throughput: the calls answered between its start and its
    deadline, while all `count` clients were calling, per second. The calls of the drain after it (each
    client finishing its round: up to a `wait` add's 20 s, with ever fewer clients) are in the latencies
    and errors but not in the throughput, which would otherwise measure the drain's length."""
    calls = sum(len(v) for v in tally.latencies.values())
    in_window = sum(answered <= deadline for answered in tally.answered_at)
    errors, window = sum(tally.errors.values()), deadline - started
    drain = max(tally.answered_at, default=deadline) - deadline
    print(
        f"\n{count} clients, {window:.1f} s: {in_window} calls in it, {in_window / window:.1f} calls/s "
        f"({calls - in_window} more in the {max(drain, 0):.1f} s drain), {errors} errors, "
        f"{tally.leaks} leaks{' (' + tally.leak_example + ')' if tally.leaks else ''}"
    )
    print(f"  {'tool':<20}{'calls':>7}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'p99/p50':>9}")
    for label in sorted(tally.latencies):
        ms = [v * 1000 for v in tally.latencies[label]]
        p50, p95, p99 = (percentile(ms, q) for q in (0.50, 0.95, 0.99))
        print(f"  {label:<20}{len(ms):>7}{p50:>9.1f}{p95:>9.1f}{p99:>9.1f}{p99 / p50:>9.1f}")
    for kind, n in sorted(tally.errors.items()):
        print(f"  error: {kind}: {n}")
    return in_window / window


async def paired(base: str, client: dict, pairs: int) -> None:
    """The same memory_grep over MCP and over the HTTP route, alternating which goes first."""
    tally = Tally()
    mcp = McpClient(base, client["key"], client["account"], client["word"], tally)
    http = Http(base)
    headers = {"Authorization": f"Bearer {client['key']}", "X-Twin-Account": client["account"]}
    arguments = {"pattern": client["word"], "limit": 5}
    await mcp.initialize()

    async def over_http():
        started = time.perf_counter()
        status, _, _ = await http.post("/v1/memory/grep", arguments, headers)
        assert status == 200, status
        return time.perf_counter() - started

    async def over_mcp():
        started = time.perf_counter()
        assert await mcp.call("memory_grep", "memory_grep", arguments) is not None, tally.errors
        return time.perf_counter() - started

    for _ in range(20):  # warm both paths and both connections
        await over_http()
        await over_mcp()
    differences: list[float] = []
    times: dict[str, list[float]] = {"mcp": [], "http": []}
    for n in range(pairs):
        if n % 2:
            h, m = await over_http(), await over_mcp()
        else:
            m, h = await over_mcp(), await over_http()
        times["mcp"].append(m)
        times["http"].append(h)
        differences.append((m - h) * 1000)
    await mcp.close()
    await http.close()
    print(f"\nPaired, 1 client, {pairs} pairs of memory_grep (MCP and /v1/memory/grep, alternating):")
    print(
        f"  MCP p50 {statistics.median(times['mcp']) * 1000:.2f} ms, HTTP route p50 "
        f"{statistics.median(times['http']) * 1000:.2f} ms, median of paired differences "
        f"{statistics.median(differences):+.2f} ms"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK['seconds']} s phases, {QUICK['pairs']} pairs")
    parser.add_argument("--seconds", type=float, help=f"how long each phase runs (default {FULL['seconds']})")
    parser.add_argument("--clients", default="1,10,50,200", help="the phases' client counts")
    parser.add_argument("--pairs", type=int, help=f"pairs in the MCP vs HTTP comparison (default {FULL['pairs']})")
    parser.add_argument("--url", help="a running service, instead of starting one")
    parser.add_argument("--default-limits", action="store_true", help="keep the default rate limits")
    args = parser.parse_args()
    defaults = QUICK if args.quick else FULL
    args.seconds = args.seconds or defaults["seconds"]
    args.pairs = defaults["pairs"] if args.pairs is None else args.pairs
    counts = [int(n) for n in args.clients.split(",")]
    if not args.url:
        setup_database()
    else:
        import django

        django.setup()
    clients = make_clients(max(counts + [WARM_UP["clients"]]), args.default_limits)
    logs = Path(tempfile.mkdtemp(prefix="twin-load-"))
    base, processes = (args.url.rstrip("/"), []) if args.url else start_stack(logs)
    print(
        f"twin memory load benchmark: {base}, {os.cpu_count()} cores, phases {counts}, {args.seconds:.0f} s "
        f"each; rate limits {'default' if args.default_limits else 'raised'} (logs: {logs})"
    )
    try:
        asyncio.run(phase(base, clients, WARM_UP["clients"], WARM_UP["seconds"]))
        throughput = {n: report(n, *asyncio.run(phase(base, clients, n, args.seconds))) for n in counts}
        if args.pairs:  # --pairs 0 leaves it out (at the default limits one client would meet its own)
            asyncio.run(paired(base, clients[0], args.pairs))
    finally:
        stop(processes)
    smaller = [throughput[n] for n in counts if n < max(counts)]
    if smaller:
        print(
            f"\nThroughput at {max(counts)} clients / the best of {', '.join(str(n) for n in counts[:-1])}: "
            f"{throughput[max(counts)] / max(smaller):.2f}"
        )


if __name__ == "__main__":
    main()
