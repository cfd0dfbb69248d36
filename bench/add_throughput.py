"""How fast memory_add stores items, and how soon they are searchable.

Starts the real stack on this machine (gunicorn with 2 workers, a Celery worker with 2 processes, the
embedded PostgreSQL, Redis), adds the LoCoMo dev turns (2,760 real conversation messages) through
POST /v1/memory/add in batches, and reports:
  - add rate: items stored per second through the HTTP route (wait=false)
  - time until searchable: from the first add until the background read has read every item
  - read rate: items read per second by the workers
  - baseline, same run: the embedding model alone on one core (sentences/s), and the read's ratio to it

    .venv/bin/python bench/add_throughput.py [--batch 100] [--limit 2760]
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def post(url: str, key: str, account: str, body: dict) -> dict:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={
        "Authorization": f"Bearer {key}", "X-Twin-Account": account, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--limit", type=int, default=2760)
    args = parser.parse_args()

    import django

    django.setup()
    from accounts.services import api_key_create, project_get_or_create
    from memory import embeddings

    from bench.locomo_data import items as locomo_items

    items = [row["item"] for row in locomo_items()][: args.limit]
    project, _ = project_get_or_create(name="Bench", owner_email="bench@example.com")
    _, key = api_key_create(project=project, access="write", name="bench")
    account = f"bench_{int(time.time())}"

    texts = [item["text"] for item in items[:500]]
    embeddings.embed(texts[:32])
    started = time.perf_counter()
    embeddings.embed(texts)
    embed_rate = len(texts) / (time.perf_counter() - started)

    port, queue = free_port(), f"bench-{os.getpid()}"
    env = {**os.environ, "TWIN_QUEUE": queue}
    web = subprocess.Popen([sys.executable, "-m", "gunicorn", "twin.wsgi", "--bind", f"127.0.0.1:{port}",
                            "--workers", "2", "--threads", "4"], cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "twin", "worker", "-Q", queue,
                               "--concurrency", "2", "--loglevel", "warning"], cwd=ROOT, env=env,
                              stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        time.sleep(3)  # let the worker finish starting
        started = time.perf_counter()
        for start in range(0, len(items), args.batch):
            post(f"{base}/v1/memory/add", key, account, {"items": items[start : start + args.batch]})
        added = time.perf_counter() - started
        while True:
            overview = post(f"{base}/v1/memory/overview", key, account, {})
            if overview["counts"]["unread_items"] == 0 and overview["counts"]["items"] == len(items):
                break
            time.sleep(0.2)
        searchable = time.perf_counter() - started
    finally:
        web.terminate()
        worker.terminate()
        web.wait()
        worker.wait()

    read_rate = len(items) / searchable
    print(f"items: {len(items)} in batches of {args.batch}")
    print(f"add rate (stored, HTTP):           {len(items) / added:8.0f} items/s")
    print(f"time until all searchable:         {searchable:8.1f} s")
    print(f"read rate (2 worker processes):    {read_rate:8.0f} items/s")
    print(f"baseline: embedding alone, 1 core: {embed_rate:8.0f} sentences/s")
    print(f"ratio read rate / embedding alone: {read_rate / embed_rate:8.2f}")


if __name__ == "__main__":
    main()
