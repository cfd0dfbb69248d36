"""Search latency at scale: memory_search through the HTTP route, server-side, no model call.

Fills a separate database (`twin_bench` on the same embedded server; the development data is untouched)
with 1,020,599 passages: one end user with 100,000, one with 19,999 (the biggest memory without indexes of its
own, so searched read whole: settings.OWN_INDEX_PASSAGES less one), 900 end users with 1,000, and one small end
user with 600. The data is synthetic but shaped like the real thing: each passage is a LoCoMo dev turn (its text,
lightly shuffled, and its vectors, the turn, the turn read with the one before it and up to 3 sentences,
embedded once by the product's own model and cached under var/bench-cache/) with gaussian noise added to
the vectors and renormalised; threads are runs of ~20 consecutive turns, dated over five years. Loaded with
COPY (indexes dropped first and rebuilt after, as the migrations define them), statistics filled with one
SQL each, as memory/read/stats.py keeps them; the big end user gets its own indexes (memory/read/own_indexes.py).
The load runs as the server's superuser (COPY FROM is refused under row-level security, and the load turns the
foreign-key triggers off); with DATABASE_URL, DATABASE_OWNER_URL must then name a superuser.

Then asks LoCoMo dev questions through POST /v1/memory/search (Django test client, in-process, a real key)
for the big and the small end user, in the ranked-list mode (`scope`) and the brief mode, and reports
p50/p95/mean, a baseline in the same run (the query's embedding alone; a bare SELECT 1), and where the time
goes (embedding, each SQL statement, scoring, the rest). Search runs as the service does: as twin_app, under
row-level security (it prints the role it is connected as).

    .venv/bin/python bench/search_latency.py [--refill] [--queries 300] [--explain] [--others 900]

A filled bench database is reused unless --refill. --explain prints EXPLAIN ANALYZE of the candidate
sources for one question at the big end user.
"""

import argparse
import importlib
import json
import os
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")
VAR_DIR = Path(os.environ.get("TWIN_VAR_DIR", ROOT / "var"))
DB_NAME = "twin_bench"
PROJECT = "Search latency bench"
BIG, MEDIUM, MEDIUM_USERS, SMALL = 100_000, 1_000, 900, 600
NOISE = 0.018  # per dimension: the noise vector's norm is ~0.35, a copy's cosine to its turn ~0.94
SEED = 7


def setup(fresh: bool = False):
    """Django on the bench database, migrated. `fresh` drops it first, so a fill always starts from the
    schema the migrations define (an interrupted fill leaves the indexes it dropped missing)."""
    if not os.environ.get("DATABASE_URL"):
        # The bench database on the embedded server, owned by twin_owner, before Django connects to it.
        import psycopg

        from twin import database_setup

        if fresh:
            # A pool (a web process's settings) still holds connections to the database about to be dropped;
            # closed, the next query opens a new one instead of waiting on the old one's reconnect back-off.
            from django.db import connections
            from django.db.backends.postgresql.base import DatabaseWrapper as PostgresWrapper

            for alias in connections.all():
                if getattr(alias, "pool", None):
                    cast(PostgresWrapper, alias).close_pool()
            with psycopg.connect(database_setup.embedded_superuser(VAR_DIR, "postgres"), autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        database_setup.set_up_embedded(VAR_DIR, DB_NAME)
        with psycopg.connect(database_setup.embedded_superuser(VAR_DIR, DB_NAME), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")  # for prewarm(); a superuser's step
        os.environ["TWIN_DB_NAME"] = DB_NAME
    import django
    from django.db import connections

    django.setup()
    connections.close_all()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)  # as twin_owner


# ---------------------------------------------------------------- the base turns and their vectors


def base_turns():
    """The 2,760 LoCoMo dev turns with their vectors (text, context, sentences), made once as the read makes
    them (memory/read/pieces.py) and cached."""
    from bench.locomo_data import items
    from memory.model import embeddings
    from memory.read.pieces import context_vector, sentences

    turns: list[dict] = []
    previous: dict = {}
    for row in items():
        item = row["item"]
        key = (row["end_user"], item.get("session", ""))
        turns.append(
            {
                "text": item["text"],
                "author": item.get("author", ""),
                "before": previous.get(key),
                "sentences": sentences(item["text"], item.get("author", ""))[:3],
            }
        )
        previous[key] = len(turns) - 1
    cache = VAR_DIR / "bench-cache" / f"locomo-read-vectors-{embeddings.MODEL_ID}.npz"  # as the read makes them
    if cache.exists():
        cached = np.load(cache)
    else:
        started = time.perf_counter()
        text = embeddings.embed([t["text"] for t in turns])
        context = np.array(
            [
                context_vector(
                    None if t["before"] is None else (len(turns[t["before"]]["text"]), text[t["before"]]),
                    len(t["text"]),
                    v,
                )
                for t, v in zip(turns, text, strict=True)
            ],
            np.float32,
        )
        flat = [s for t in turns for s in t["sentences"]]
        sent = embeddings.embed(flat) if flat else np.zeros((0, embeddings.DIMENSIONS), np.float32)
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, text=text, context=context, sentences=sent)
        cached = np.load(cache)
        print(
            f"embedded {len(turns)} turns and {len(flat)} sentences in {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
        )
    offsets = np.cumsum([0] + [len(t["sentences"]) for t in turns])
    return turns, cached["text"], cached["context"], cached["sentences"], offsets


def _noisy(rng, vectors: np.ndarray) -> np.ndarray:
    out = vectors + rng.normal(0, NOISE, vectors.shape).astype(np.float32)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


# ---------------------------------------------------------------- filling


def _secondary_indexes(cursor, tables):
    """(name, definition) of the indexes that back no constraint: dropped before COPY, rebuilt after."""
    cursor.execute(
        """
        SELECT i.indexname, i.indexdef FROM pg_indexes i
        WHERE i.tablename = ANY(%s) AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)
    """,
        [tables],
    )
    return cursor.fetchall()


def fill(end_users: list[tuple[int, int]]):
    """Load (end user pk, passages) into the bench database with COPY."""
    import psycopg
    from django.conf import settings
    from pgvector import HalfVector
    from pgvector.psycopg import register_vector

    from memory.model.embeddings import MODEL_ID
    from twin import database_setup
    from twin.database import OWNER

    rng = np.random.default_rng(SEED)
    turns, text_v, context_v, sentence_v, offsets = base_turns()
    words = [t["text"].split(" ") for t in turns]
    tables = ["memory_item", "memory_thread", "memory_passage", "memory_passagesentence"]
    if os.environ.get("DATABASE_URL"):
        db = settings.DATABASES[OWNER]
        conn = psycopg.connect(
            host=db["HOST"], port=db["PORT"], user=db["USER"], password=db["PASSWORD"], dbname=db["NAME"]
        )
    else:
        conn = psycopg.connect(database_setup.embedded_superuser(VAR_DIR, DB_NAME))
    register_vector(conn)
    started = time.perf_counter()
    with conn.cursor() as cur:
        cur.execute(
            "TRUNCATE memory_passagesentence, memory_passage, memory_item, memory_thread, memory_termstat, "
            "memory_memorystats, memory_fact, memory_itemversion, memory_writtenindex CASCADE"
        )
        saved = _secondary_indexes(cur, tables)
        for name, _ in saved:
            cur.execute(f'DROP INDEX "{name}"')
        cur.execute("SET session_replication_role = replica")  # no FK triggers during the load
    conn.commit()
    item_id = thread_id = passage_id = sentence_id = 0
    epoch = datetime(2019, 1, 1, tzinfo=UTC)
    now = datetime.now(UTC)
    n_turns = len(turns)
    copies = {
        "item": "COPY memory_item (id, end_user_id, external_id, kind, text, at, author, role, session, title, "
        "about, metadata, version, read_version, read_at, created_at, updated_at, failed_version, failed_reason, "
        "facts_imported_version, caller_id) "
        "FROM STDIN",
        "thread": "COPY memory_thread (id, end_user_id, tid, source, kind, key, title, next_seq, created_at, "
        "passage_count) "
        "FROM STDIN",
        "passage": "COPY memory_passage (id, end_user_id, thread_id, item_id, seq, path, kind, at, author, role, "
        "title, about, text, item_ids, embedding, context_embedding, model) FROM STDIN (FORMAT BINARY)",
        "sentence": "COPY memory_passagesentence (id, end_user_id, passage_id, embedding) FROM STDIN (FORMAT BINARY)",
    }
    types = {
        "passage": [
            "bigint",
            "bigint",
            "bigint",
            "bigint",
            "integer",
            "varchar",
            "varchar",
            "timestamptz",
            "varchar",
            "varchar",
            "varchar",
            "varchar",
            "text",
            "varchar[]",
            "halfvec",
            "halfvec",
            "varchar",
        ],
        "sentence": ["bigint", "bigint", "bigint", "halfvec"],
    }
    for n_user, (end_user, size) in enumerate(end_users):
        # Threads: runs of 10-30 consecutive turns from a random place, dated over five years, oldest first.
        lengths: list[int] = []
        while sum(lengths) < size:
            lengths.append(min(int(rng.integers(10, 31)), size - sum(lengths)))
        days = np.sort(rng.uniform(0, 5 * 365, len(lengths)))
        base = np.concatenate([rng.integers(0, n_turns - n) + np.arange(n) for n in lengths])
        t_vec, c_vec = _noisy(rng, text_v[base]), _noisy(rng, context_v[base])
        rows: dict[str, list[tuple]] = {k: [] for k in copies}
        sentences = []
        position = 0
        for n_thread, (n, day) in enumerate(zip(lengths, days, strict=True)):
            thread_id += 1
            tid = "th_" + rng.bytes(8).hex()
            session = f"s{n_thread}"
            start = epoch + timedelta(days=float(day))
            rows["thread"].append(
                (thread_id, end_user, tid, "memory", "message", f"session:{session}", session, n + 1, now, n)
            )
            for seq in range(1, n + 1):
                b = int(base[position])
                item_id += 1
                passage_id += 1
                w = list(words[b])
                if len(w) > 4:  # swap two words: the same lexemes, not the same string
                    i, j = rng.integers(1, len(w), 2)
                    w[i], w[j] = w[j], w[i]
                text = " ".join(w)
                at = start + timedelta(minutes=seq)
                external = f"m{item_id}"
                author = turns[b]["author"]
                rows["item"].append(
                    (
                        item_id,
                        end_user,
                        external,
                        "message",
                        text,
                        at,
                        author,
                        "user",
                        session,
                        "",
                        "",
                        "{}",
                        1,
                        1,
                        now,
                        now,
                        now,
                        0,
                        "",
                        0,
                        True,
                    )
                )
                rows["passage"].append(
                    (
                        passage_id,
                        end_user,
                        thread_id,
                        item_id,
                        seq,
                        f"passages/memory/messages/{tid}/p_{seq:04d}.md",
                        "message",
                        at,
                        author,
                        "user",
                        "",
                        "",
                        text,
                        [external],
                        HalfVector(t_vec[position]),
                        HalfVector(c_vec[position]),
                        MODEL_ID,
                    )
                )
                for k in range(offsets[b], offsets[b + 1]):
                    sentences.append((passage_id, k))
                position += 1
        if sentences:
            s_vec = _noisy(rng, sentence_v[[k for _, k in sentences]])
            for (pid, _), vector in zip(sentences, s_vec, strict=True):
                sentence_id += 1
                rows["sentence"].append((sentence_id, end_user, pid, HalfVector(vector)))
        with conn.cursor() as cur:
            for name in ("thread", "item", "passage", "sentence"):
                with cur.copy(copies[name]) as copy:
                    if name in types:
                        copy.set_types(types[name])
                    for row in rows[name]:
                        copy.write_row(row)
        conn.commit()
        if n_user % 100 == 0:
            print(
                f"  end user {n_user + 1}/{len(end_users)}: {passage_id:,} passages, {sentence_id:,} sentences, "
                f"{time.perf_counter() - started:.0f} s",
                file=sys.stderr,
            )
    with conn.cursor() as cur:
        cur.execute("SET session_replication_role = origin")
        for table, column in (
            ("memory_item", item_id),
            ("memory_thread", thread_id),
            ("memory_passage", passage_id),
            ("memory_passagesentence", sentence_id),
        ):
            cur.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), %s)", [max(column, 1)])
        # What memory/read/stats.py keeps as passages are written, in one statement each.
        cur.execute(
            "INSERT INTO memory_termstat (end_user_id, term, df) SELECT end_user_id, lexeme, count(*) "
            "FROM memory_passage, unnest(search) GROUP BY end_user_id, lexeme"
        )
        cur.execute(
            "INSERT INTO memory_memorystats (end_user_id, passages, lexemes) "
            "SELECT end_user_id, count(*), sum(length(search)) FROM memory_passage GROUP BY end_user_id"
        )
        # Each thread's passages counted, as Memory.recount_threads keeps them (the migration's statement).
        cur.execute(importlib.import_module("memory.migrations.0018_thread_counts").COUNT_THREADS)
        conn.commit()
        print(f"loaded in {time.perf_counter() - started:.0f} s; building indexes", file=sys.stderr)
        cur.execute("SET maintenance_work_mem = '6GB'")
        cur.execute("SET max_parallel_maintenance_workers = 2")
        for name, definition in saved:
            t = time.perf_counter()
            cur.execute(definition)
            conn.commit()
            print(f"  {name}: {time.perf_counter() - t:.0f} s", file=sys.stderr)
        conn.commit()
        conn.autocommit = True
        for table in tables + ["memory_termstat", "memory_memorystats"]:
            cur.execute(f"VACUUM ANALYZE {table}")
    conn.close()
    print(f"filled in {time.perf_counter() - started:.0f} s", file=sys.stderr)


# ---------------------------------------------------------------- measuring


class Timer:
    """Where one request's time goes: the embedding, each SQL statement by kind, scoring."""

    KINDS = [
        ("WITH nearest AS", "vector source, neighbours and features SQL"),
        ("ORDER BY ts_rank", "text source SQL"),
        ("memory_memorystats", "BM25 statistics SQL"),
    ]

    def __init__(self):
        self.spent = defaultdict(float)
        self.overlapped = set()  # parts that run on another thread, alongside the request's own

    def sql(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            kind = next((k for marker, k in self.KINDS if marker in sql), "other SQL (key, memory, passages, facts)")
            self.spent[kind] += time.perf_counter() - started

    def wrap(self, module, name, kind, overlapped=False):
        original = getattr(module, name)
        if overlapped:
            self.overlapped.add(kind)

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.spent[kind] += time.perf_counter() - started

        setattr(module, name, timed)


def percentiles(values) -> str:
    t = np.array(values) * 1000
    return f"p50 {np.percentile(t, 50):6.1f} | p95 {np.percentile(t, 95):6.1f} | mean {t.mean():6.1f}"


def prewarm():
    """Read the tables and indexes search touches into shared buffers, as a server in steady state has them:
    a cold page costs ~15 us to read back from the OS here, and a question's HNSW scan touches ~1,000. As their
    owner (pg_prewarm reads a relation for whoever may; an index is its table owner's)."""
    from django.db import connections

    from twin.database import OWNER

    with connections[OWNER].cursor() as cursor:
        cursor.execute("""
            SELECT sum(pg_prewarm(c.oid)) FROM pg_class c
            WHERE c.relname IN ('memory_passagesentence', 'memory_passage', 'passage_fulltext', 'memory_termstat',
                                'memory_memorystats')
               OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN
                            ('memory_passage'::regclass, 'memory_passagesentence'::regclass))
        """)
        cursor.execute("SELECT current_setting('shared_buffers')")
        print(f"prewarmed into {cursor.fetchone()[0]} of shared buffers")


def measure(key: str, users: dict[str, int], n_queries: int):
    from django.db import connection, connections
    from django.test import Client

    from bench.locomo_data import queries
    from memory.model import embeddings
    from memory.query import retrieval
    from memory.read import own_indexes
    from memory.selectors import Memory
    from twin.database import OWNER

    rng = np.random.default_rng(SEED)
    questions = [q["question"] for q in queries()]
    asked = [questions[i] for i in rng.choice(len(questions), n_queries, replace=len(questions) < n_queries)]
    http = Client()

    def search(user, body):
        response = http.post(
            "/v1/memory/search",
            json.dumps(body),
            content_type="application/json",
            headers={"Authorization": f"Bearer {key}", "X-Twin-Account": user},
        )
        assert response.status_code == 200, response.content[:300]
        return response.json()

    for q in asked[:20]:  # warm-up: the model, the connection, the caches
        for user in users:
            search(user, {"query": q})
    # Baselines in the same run.
    embed_times, select_times = [], []
    for q in asked:
        started = time.perf_counter()
        embeddings.embed_one(q)
        embed_times.append(time.perf_counter() - started)
        with connection.cursor() as cursor:
            started = time.perf_counter()
            cursor.execute("SELECT 1")
            cursor.fetchone()
            select_times.append(time.perf_counter() - started)
    print(f"| baseline: the query's embedding alone | {percentiles(embed_times)} |")
    print(f"| baseline: SELECT 1 round trip | {percentiles(select_times)} |")
    timer = Timer()
    timer.wrap(embeddings, "embed_one", "embedding (alongside the text source)", overlapped=True)
    timer.wrap(retrieval, "_score", "scoring (numpy)")
    breakdown = {}

    def run(label, user, extra):
        timer.spent.clear()
        times, found = [], []
        for q in asked:
            started = time.perf_counter()
            answer = search(user, {"query": q, **extra})
            times.append(time.perf_counter() - started)
            found.append(answer["found"])
        print(f"| {label} | {percentiles(times)} | hits {np.mean(found):.1f} |")
        spent = dict(timer.spent)
        spent["rest (auth, rendering, Django)"] = sum(times) - sum(
            v for k, v in spent.items() if k not in timer.overlapped
        )
        breakdown[label] = {k: v / len(times) * 1000 for k, v in spent.items()}

    with connection.execute_wrapper(timer.sql):
        for user, size in users.items():
            for mode, extra in (("ranked", {"scope": "passages/"}), ("brief", {})):
                run(f"{size:,} passages, {mode}", user, extra)
    # The same run's baseline for own indexes (memory/read/own_indexes.py): the big memory searched as a smaller
    # one is, read whole (no vector index over everyone's passages: migration 0022) and through the shared
    # full-text index, its own dropped by their owner and built again after.
    big = own_indexes.existing()
    with connections[OWNER].cursor() as cursor:
        for name in big:
            cursor.execute(f'DROP INDEX "{name}"')
    size = max(users.values())
    with connection.execute_wrapper(timer.sql):
        run(f"{size:,} passages, brief, no own indexes", next(u for u, n in users.items() if n == size), {})
    for end_user in {int(name.rsplit("_u", 1)[1]) for name in big}:
        memory = Memory.of_end_user(end_user)
        assert memory is not None
        own_indexes.build(memory)
    print("\nmean ms per request:")
    kinds = sorted(
        {k for b in breakdown.values() for k in b}, key=lambda k: -max(b.get(k, 0) for b in breakdown.values())
    )
    print("| part | " + " | ".join(breakdown) + " |")
    print("|---" * (len(breakdown) + 1) + "|")
    for kind in kinds:
        print(f"| {kind} | " + " | ".join(f"{b.get(kind, 0):.1f}" for b in breakdown.values()) + " |")
    return search


def explain(project: int, end_user: int, question: str):
    from memory.query import retrieval
    from memory.selectors import Memory, PassageFilters

    filters = PassageFilters(current_at=datetime.now(UTC))
    memory = Memory.of_end_user(end_user)
    assert memory is not None
    with memory.scoped():
        plans = retrieval.explain(memory, question, filters)
    for source, plan in plans.items():
        print(f"-- {source} source\n{plan}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--refill", action="store_true")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--profile", action="store_true", help="then a cProfile of the big memory's briefs")
    parser.add_argument("--scale", type=float, default=1.0, help="a smaller database for a quick try, e.g. 0.01")
    parser.add_argument(
        "--others",
        type=int,
        default=900,
        help="end users of 1,000 passages beside the big one (900: 1M passages in all)",
    )
    parser.add_argument("--database", default="twin_bench", help="the bench database's name on the embedded server")
    args = parser.parse_args()
    global BIG, MEDIUM_USERS, DB_NAME
    DB_NAME = args.database
    BIG, MEDIUM_USERS = int(BIG * args.scale), max(1, int(args.others * args.scale))
    setup()
    from django.conf import settings
    from django.db import connection

    from accounts.ratelimit import RATE_LIMIT_MAX
    from accounts.services import api_key_create, end_user_get_or_create, project_get_or_create, project_set_rate_limits
    from memory.models import MemoryStats, Passage
    from memory.selectors import scoped

    mid = int((settings.OWN_INDEX_PASSAGES - 1) * args.scale)
    shape = [("big", BIG), ("mid", mid)] + [(f"u{i:04d}", MEDIUM) for i in range(MEDIUM_USERS)] + [("small", SMALL)]

    def bench_users():
        project, _ = project_get_or_create(name=PROJECT, owner_email="bench@example.com")
        return project, {name: end_user_get_or_create(project=project, external_id=name) for name, _ in shape}

    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user AS role")
        print(f"connected as {dict(zip([c.name for c in cursor.description], cursor.fetchone(), strict=True))['role']}")
    project, users = bench_users()
    with scoped(project.pk):
        stats = dict(MemoryStats.objects.filter(end_user__in=users.values()).values_list("end_user_id", "passages"))
    if args.refill or any(stats.get(users[name].pk) != size for name, size in shape):
        setup(fresh=True)
        project, users = bench_users()
        fill([(users[name].pk, size) for name, size in shape])
    # What the beat's tend_own_indexes does for a big memory (memory/read/own_indexes.py).
    from memory.read import own_indexes
    from memory.selectors import Memory

    for end_user in own_indexes.wanted():
        started = time.perf_counter()
        memory = Memory.of_end_user(end_user)
        assert memory is not None
        built = own_indexes.build(memory)
        print(f"built {', '.join(built)} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    # The limiter stays on (its Redis round trip is part of every request), with a budget one fast client
    # does not meet: at the default 600 a minute for one end user, the bench's back-to-back searches would.
    project_set_rate_limits(project=project, per_credential=RATE_LIMIT_MAX, per_end_user=RATE_LIMIT_MAX)
    _, key = api_key_create(project=project, access="read", name="search latency bench")
    with scoped(project.pk):
        total = Passage.objects.count()
    print(f"database: {total:,} passages over {len(shape)} end users; big {BIG:,}, mid {mid:,}, small {SMALL:,}\n")
    if args.explain:
        explain(project.pk, users["big"].pk, "What did Caroline research?")
    prewarm()
    print("| what | ms | |")
    print("|---|---|---|")
    search = measure(key, {"big": BIG, "mid": mid, "small": SMALL}, args.queries)
    if args.profile:
        profile(search, args.queries)


def profile(search, n_queries: int):
    """Where a brief's own Python goes: the functions that spend the most time themselves."""
    import cProfile
    import pstats

    from bench.locomo_data import queries

    asked = [q["question"] for q in queries()][:n_queries]
    profiler = cProfile.Profile()
    profiler.enable()
    for q in asked:
        search("big", {"query": q})
    profiler.disable()
    print(f"\ncProfile of {len(asked)} briefs at {BIG:,} passages (per brief: ms = cumulative / {len(asked)}):")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(35)


if __name__ == "__main__":
    main()
