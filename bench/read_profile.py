"""Where the background read's time goes: each stage of it, in one process, on LoCoMo dev turns.

Stores the turns for a new end user of a project of its own (their read queued to a queue no worker takes,
then that queue and the project's turn dropped, so no other bench's adds wait for them), then reads them
here as a worker's turns do (memory.tasks._read_turn, a slice at a time, the model on as many threads as the
machine has cores) under cProfile, and prints each stage's share of the read's time.

With --cpu, no profiler: the model alone on the same texts first, then the read, and where the CPU of each
went: the model's own process (tokenizing and its lanes), the rest of this process (the read's Python, the
driver) and its PostgreSQL backend, per turn, and the in-process ratio of the read's speed to the
model alone's (bench/README.md "Adding").

    .venv/bin/python bench/read_profile.py [--limit 640] [--dump read.prof] [--cpu]
"""

import argparse
import cProfile
import os
import pstats
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")
os.environ["TWIN_QUEUE"] = f"read-profile-{os.getpid()}"  # the adds' read turns wait there, unread

# (label, module file, function): the stages, in the order they run. Nested ones are indented in the table.
STAGES = [
    ("choose the slice (fairness.next_slice)", "memory/fairness.py", "next_slice"),
    ("load the items (pipeline._pending)", "memory/read/pipeline.py", "_pending"),
    ("the passage before each item's (pipeline._previous)", "memory/read/pipeline.py", "_previous"),
    ("embedding (embeddings.embed)", "memory/embeddings.py", "embed"),
    ("writes (pipeline._write_slice)", "memory/read/pipeline.py", "_write_slice"),
    ("  threads locked (_lock_threads)", "memory/read/pipeline.py", "_lock_threads"),
    ("  statistics counted (stats.count_passages)", "memory/read/stats.py", "count_passages"),
    ("  facts (facts.record_facts)", "memory/read/facts.py", "record_facts"),
    ("index.md (written_index.rewrite_index)", "memory/read/written_index.py", "rewrite_index"),
    ("notice to waiting adds (notices.announce_read)", "memory/read/notices.py", "announce_read"),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=640)
    parser.add_argument("--dump", help="also write the whole profile there, for pstats")
    parser.add_argument("--cpu", action="store_true", help="no profiler: where the read's CPU goes")
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import transaction

    from accounts.models import EndUser
    from accounts.services import project_get_or_create
    from bench.locomo_data import items as locomo_items
    from memory import services, tasks, tools
    from memory.limits import READ_SLICE_ITEMS
    from memory.model import embeddings
    from memory.selectors import Memory
    from memory.validation import validate
    from twin import quick_redis

    project, _ = project_get_or_create(name="Read profile bench", owner_email="bench@example.com")
    end_user = EndUser.objects.create(project=project, external_id=f"profile_{int(time.time())}")
    memory = Memory(end_user)
    turns = [row["item"] for row in locomo_items()][: args.limit]
    add = next(tool for tool in tools.TOOLS if tool.name == "memory_add")
    for start in range(0, len(turns), 500):
        batch = validate(add.input_schema, {"items": turns[start : start + 500]})["items"]
        with memory.scoped(), transaction.atomic():
            services.store_items(memory=memory, items=batch)
    quick_redis.client(1).delete(os.environ["TWIN_QUEUE"], quick_redis.key("read-turn", project.pk))

    embeddings.use_lanes(os.cpu_count() or 1)
    embeddings.embed(["warm the model up"])
    if args.cpu:
        return cpu(project.pk, [turn["text"] for turn in turns])
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    while tasks._read_turn(project.pk):
        pass
    profiler.disable()
    seconds = time.perf_counter() - started
    if args.dump:
        profiler.dump_stats(args.dump)

    # (file, line, function) -> (calls, _, own, cumulative, _); typeshed leaves this attribute of Stats out
    timings = pstats.Stats(profiler).stats  # type: ignore[attr-defined]  # set in Stats.__init__
    print(
        f"{len(turns)} turns read in slices of at most {READ_SLICE_ITEMS}, {seconds:.1f} s "
        f"({len(turns) / seconds:.1f} turns/s), model threads {os.cpu_count()}"
    )
    print(f"{'stage':68s} {'seconds':>8s} {'share':>6s}")
    for label, path, function in STAGES:
        spent = sum(row[3] for (file, _, name), row in timings.items() if name == function and file.endswith(path))
        print(f"{label:68s} {spent:8.2f} {spent / seconds:6.0%}")


def cpu(project_id: int, texts: list[str]):
    """The model alone on `texts`, then their read, each with the CPU it took: the model's own process
    (memory/model_process.py: tokenizing and the model's lanes), the rest of this process (the read's
    Python, the driver) and the read's PostgreSQL backend."""
    from django.db import connection

    from bench.cpu_share import cpu_seconds
    from memory import tasks
    from memory.model import embeddings

    def process() -> float:
        used = resource.getrusage(resource.RUSAGE_SELF)
        return used.ru_utime + used.ru_stime

    def backend() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            return cursor.fetchone()[0]

    def measured(work) -> tuple[float, float, float, float]:
        assert embeddings._model_process is not None, "the model's process runs (use_lanes)"
        model, database = embeddings._model_process.pid, backend()
        before = (cpu_seconds(model), process(), cpu_seconds(database), time.perf_counter())
        work()
        return (
            time.perf_counter() - before[3],
            cpu_seconds(model) - before[0],
            process() - before[1],
            cpu_seconds(database) - before[2],
        )

    def read_all():
        while tasks._read_turn(project_id):
            pass

    alone = measured(lambda: embeddings.embed(texts))
    read = measured(read_all)
    n = len(texts)
    print(f"{n} turns; ms of CPU a turn: the model's process, the rest of this process, its PostgreSQL backend")
    cores = os.cpu_count() or 1
    for name, (wall, model, rest, database) in (("the model alone", alone), ("the read", read)):
        print(
            f"{name:16s} {wall:6.2f} s  model {1000 * model / n:5.2f}  rest {1000 * rest / n:5.2f}  "
            f"PostgreSQL {1000 * database / n:5.2f}  cores busy {(model + rest + database) / wall / cores:4.0%}"
        )
    print(f"in-process ratio, the read's texts a second over the model alone's: {alone[0] / read[0]:.2f}")


if __name__ == "__main__":
    main()
