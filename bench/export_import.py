"""Export and import at 100,000 items: time, and the memory the process holds while it runs.

Fills a separate database (`twin_bench_portability` on the same embedded server; the development data is
untouched) with one end user of N items (default 100,000): notes of about 200 characters, one in ten
edited once (a version), two facts each. Then, as twin_app under row-level security:
  - export: export_lines() read to the end, as POST /v1/memory/export streams it (time; file size)
  - check: the import's first pass over that file (time)
  - store: the import's second pass into a fresh end user (time), its reads queued on a throwaway queue
    that no worker reads, deleted afterwards
and the peak of Python's allocations (tracemalloc) during export and check, in a second, traced run, for N
and for N/10: bounded memory means the two peaks are alike.

    .venv/bin/python bench/export_import.py [--items 100000] [--refill] [--no-store]
    .venv/bin/python bench/export_import.py --worst [--worst-bytes 2147483648]

--worst measures instead the worst a client can send, against the real stack, and search during it
(bench/import_worst.py).
"""

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")
VAR_DIR = Path(os.environ.get("TWIN_VAR_DIR", ROOT / "var"))
DB_NAME = "twin_bench_portability"
QUEUE = f"bench-portability-{os.getpid()}"  # the store pass's reads go here and are dropped
PROJECT = "Portability bench"
EDITED_EVERY = 10  # one item in ten has an earlier version
FACTS_PER_ITEM = 2
FILL_BATCH = 5_000
WORDS = ("garden", "meeting", "Lisbon", "flight", "project", "tea", "review", "Berlin", "invoice", "concert")


def setup(fresh: bool):
    if not os.environ.get("DATABASE_URL"):
        import psycopg

        from twin import database_setup

        if fresh:
            with psycopg.connect(database_setup.embedded_superuser(VAR_DIR, "postgres"), autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        database_setup.set_up_embedded(VAR_DIR, DB_NAME)
        os.environ["TWIN_DB_NAME"] = DB_NAME
    os.environ["TWIN_QUEUE"] = QUEUE
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def fill(end_user, count: int) -> None:
    from memory.models import Fact, Item, ItemVersion
    from memory.selectors import scoped

    start = datetime(2020, 1, 1, tzinfo=UTC)
    for first in range(0, count, FILL_BATCH):
        with scoped(end_user.project_id, end_user.pk):
            items = Item.objects.bulk_create(
                Item(
                    end_user=end_user,
                    external_id=f"n{n}",
                    kind="note",
                    at=start + timedelta(minutes=n),
                    version=2 if n % EDITED_EVERY == 0 else 1,
                    text=f"Note {n}: " + " ".join(WORDS[(n + k) % len(WORDS)] for k in range(30)),
                )
                for n in range(first, min(first + FILL_BATCH, count))
            )
            ItemVersion.objects.bulk_create(
                ItemVersion(item=item, version=1, text="An earlier text.", fields={"kind": "note"})
                for item in items
                if item.version == 2
            )
            Fact.objects.bulk_create(
                Fact(
                    end_user=end_user,
                    item=item,
                    subject="Alice",
                    subject_key="alice",
                    attribute="likes",
                    value=WORDS[(item.pk + k) % len(WORDS)],
                    valid_from=item.at,
                    stated_at=item.at,
                    source_seq=1,
                )
                for item in items
                for k in range(FACTS_PER_ITEM)
            )
        print(f"\rfilled {min(first + FILL_BATCH, count):,}/{count:,}", end="", file=sys.stderr)
    print(file=sys.stderr)


def end_user_with(project, name: str, count: int, refill: bool):
    from accounts.services import end_user_get_or_create
    from memory.selectors import scoped

    end_user = end_user_get_or_create(project=project, external_id=name)
    with scoped(project.pk, end_user.pk):
        have = end_user.items.count()
    if have != count or refill:
        with scoped(project.pk, end_user.pk):  # row-level security: the cascade must see the rows it erases
            end_user.delete()
        end_user = end_user_get_or_create(project=project, external_id=name)
        fill(end_user, count)
    return end_user


def export_to(memory, path: str) -> float:
    from memory.portability.export import export_lines

    started = time.perf_counter()
    with open(path, "wb") as file:
        for chunk in export_lines(memory):
            file.write(chunk)
    return time.perf_counter() - started


def traced(run) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--refill", action="store_true")
    parser.add_argument("--no-store", action="store_true")
    parser.add_argument("--worst", action="store_true", help="the worst a client can send (bench/import_worst.py)")
    parser.add_argument("--worst-bytes", type=int, default=2 * 1024**3, help="the largest body: IMPORT_MAX_BYTES")
    args = parser.parse_args()
    setup(args.refill)
    if args.worst:
        return worst(args.worst_bytes)
    import redis
    from django.conf import settings

    from accounts.services import end_user_get_or_create, project_get_or_create
    from memory.portability import imports
    from memory.selectors import Memory

    project, _ = project_get_or_create(name=PROJECT, owner_email="bench@example.com")
    small_count = args.items // 10
    big = Memory(end_user_with(project, "big", args.items, args.refill))
    small = Memory(end_user_with(project, "small", small_count, args.refill))
    with tempfile.TemporaryDirectory() as folder:
        path, small_path = f"{folder}/big.jsonl", f"{folder}/small.jsonl"
        seconds = export_to(big, path)
        file_bytes = os.path.getsize(path)
        print(
            f"export {args.items:,} items: {seconds:.1f} s ({args.items / seconds:,.0f} items/s), "
            f"{file_bytes / 1e6:,.1f} MB"
        )
        with open(path, "rb") as file:
            started = time.perf_counter()
            size = imports.check_file(file, project_id=project.pk)
            print(f"check {size.items:,} items: {time.perf_counter() - started:.1f} s")
        export_to(small, small_path)
        for memory, file_path, count in ((small, small_path, small_count), (big, path, args.items)):
            exported = traced(lambda memory=memory, file_path=file_path: export_to(memory, file_path))
            with open(file_path, "rb") as file:
                checked = traced(lambda: imports.check_file(file, project_id=project.pk))
            print(
                f"peak Python allocations at {count:,} items: export {exported / 1e6:.1f} MB, "
                f"check {checked / 1e6:.1f} MB"
            )
        if not args.no_store:
            target = Memory(end_user_get_or_create(project=project, external_id=f"imported_{os.getpid()}"))
            with open(path, "rb") as file:
                started = time.perf_counter()
                answer = imports.store_file(memory=target, file=file, size=size)
                seconds = time.perf_counter() - started
            print(
                f"store {answer['items']:,} items ({answer['versions']:,} versions, {answer['facts']:,} facts): "
                f"{seconds:.1f} s ({answer['items'] / seconds:,.0f} items/s)"
            )
            with target.scoped():
                target.end_user.delete()
            redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(QUEUE)


def worst(worst_bytes: int) -> None:
    """The worst case a client can send, and search during it (bench/import_worst.py), with four projects."""
    from accounts.services import api_key_create, project_get_or_create
    from bench import import_worst

    keys = []
    for n in range(import_worst.BOMBS_AT_ONCE):
        project, _ = project_get_or_create(name=f"{PROJECT} worst {n}", owner_email="bench@example.com")
        keys.append(api_key_create(project=project, access="write", name="bench")[1])
    import_worst.run(keys=keys, queue=QUEUE, worst_bytes=worst_bytes)


if __name__ == "__main__":
    main()
