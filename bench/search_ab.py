"""Search latency of two checkouts, paired: each question asked of one and then the other, in turn.

On a shared machine whose load comes and goes, two runs of bench/search_latency.py minutes apart are not
comparable; asking each question of both checkouts back to back is. Each checkout serves in a process of its
own (the bench database bench/search_latency.py filled, a real key, POST /v1/memory/search through Django's
test client, as that bench does); the order within a pair is shuffled. Prints p50/p95/mean of each, the
median paired difference and ratio, and each one's baselines (the question's embedding alone, SELECT 1).

    .venv/bin/python bench/search_ab.py BASE_CHECKOUT NEW_CHECKOUT [--questions 200] [--modes big:brief,big:ranked]

One checkout against itself under a switch: `bench/search_ab.py . . --base-env METRICS=off` (metrics off in
base, on in new).
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time

import numpy as np

PROJECT = "Search latency bench"
WARM_UP = 20


def serve(root: str, database: str):
    """One side: answers `search <i> <end user> <mode>`, `embed <i>` and `select` on stdin with milliseconds."""
    sys.path.insert(0, root)
    os.chdir(root)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")
    os.environ["TWIN_DB_NAME"] = database
    import django

    django.setup()
    from django.db import connection
    from django.test import Client

    from accounts.services import api_key_create, project_get_or_create
    from bench.locomo_data import queries

    try:  # the model's module, in either checkout's layout
        from memory.model import embeddings
    except ImportError:
        from memory import embeddings  # type: ignore[attr-defined, no-redef]  # the layout before memory/model/

    project, _ = project_get_or_create(name=PROJECT, owner_email="bench@example.com")
    _, key = api_key_create(project=project, access="read", name="search a/b")
    questions = [q["question"] for q in queries()]
    asked = [questions[i] for i in np.random.default_rng(7).choice(len(questions), 300, replace=False)]
    http = Client()

    def search(question, user, mode):
        body = {"query": question, **({"scope": "passages/"} if mode == "ranked" else {})}
        response = http.post(
            "/v1/memory/search",
            json.dumps(body),
            content_type="application/json",
            headers={"Authorization": f"Bearer {key}", "X-Twin-Account": user},
        )
        assert response.status_code == 200, response.content[:300]

    for question in asked[:WARM_UP]:
        search(question, "big", "brief")
        search(question, "small", "brief")
    print("ready", flush=True)
    for line in sys.stdin:
        what, *rest = line.split()
        started = time.perf_counter()
        if what == "search":
            search(asked[int(rest[0]) % len(asked)], rest[1], rest[2])
        elif what == "embed":
            embeddings.embed_one(asked[int(rest[0]) % len(asked)])
        else:
            with connection.cursor() as cursor:
                started = time.perf_counter()
                cursor.execute("SELECT 1")
                cursor.fetchone()
        print(f"{(time.perf_counter() - started) * 1000:.3f}", flush=True)


def summary(values) -> str:
    v = np.array(values)
    return f"p50 {np.percentile(v, 50):.1f}, p95 {np.percentile(v, 95):.1f}, mean {v.mean():.1f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--modes", default="big:brief,big:ranked")
    parser.add_argument("--database", default="twin_bench")
    parser.add_argument("--base-env", action="append", default=[], help="NAME=VALUE set for the base side only")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve, args.database)
    sides = {"base": os.path.abspath(args.base), "new": os.path.abspath(args.new)}
    environments = {"base": {**os.environ, **dict(pair.split("=", 1) for pair in args.base_env)}, "new": None}
    procs = {
        name: subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "x", "x", "--serve", root, "--database", args.database],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=environments[name],
        )
        for name, root in sides.items()
    }
    pipes = {name: (proc.stdin, proc.stdout) for name, proc in procs.items()}
    for name, (_, out) in pipes.items():
        assert out is not None and out.readline().startswith("ready"), f"{name} did not start"

    def ask(name, command):
        into, out = pipes[name]
        assert into is not None and out is not None
        into.write(command + "\n")
        into.flush()
        return float(out.readline())

    times: dict[tuple[str, str], list[float]] = {}
    for mode in args.modes.split(","):
        user, kind = mode.split(":")
        for i in range(args.questions):
            order = list(sides)
            random.Random(i).shuffle(order)
            for name in order:
                times.setdefault((mode, name), []).append(ask(name, f"search {i} {user} {kind}"))
    print("| what | base ms | new ms | paired: median new - base, median new / base |")
    print("|---|---|---|---|")
    for label, command in (("the question's embedding alone", "embed"), ("SELECT 1", "select")):
        base = [ask("base", f"{command} {i}") for i in range(args.questions)]
        new = [ask("new", f"{command} {i}") for i in range(args.questions)]
        print(f"| baseline: {label} | {summary(base)} | {summary(new)} | |")
    for mode in args.modes.split(","):
        base_ms, new_ms = np.array(times[(mode, "base")]), np.array(times[(mode, "new")])
        print(
            f"| {mode} | {summary(base_ms)} | {summary(new_ms)} | {np.median(new_ms - base_ms):+.1f} ms, "
            f"{np.median(new_ms / base_ms):.3f} |"
        )
    for name, proc in procs.items():
        into, _ = pipes[name]
        assert into is not None
        into.close()
        proc.wait()


if __name__ == "__main__":
    main()
