"""Search quality on LoCoMo (half: 5 long conversations, 999 questions), turn level, held out.

Loads each conversation into its own end user through the product's own add path (POST /v1/memory/add, the
real background read and embeddings, run in-process). The ranking's weights are fitted by bench/tune.py
leaving one conversation out: for each conversation, the weights fitted on the four others rank its
questions. Every question then goes black-box through POST /v1/memory/search as a ranked list (`scope:
"passages/"`), asked as an assistant asks, without a day (the headline), and again as of the question's day
(`before`). The hits are scored against the turns that answer the question (bench/metrics.py): recall@1/5/10,
any@10 and session any@10, overall (categories 1-4) and per category, category 5 (adversarial) apart, each
with its 95% bootstrap interval (questions resampled, fixed seed). A BM25 baseline (bm25s, English stop
words, Snowball stemmer, over each conversation's turns) runs on the same questions in the same run.

    .venv/bin/python bench/locomo.py [--reload] [--ablate]

The loaded memories are kept in the development database (project "LoCoMo bench") and reused; --reload
loads them again. --ablate also reports the held-out recall@10 with each feature left out of the fits.
"""

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")

from bench import metrics, tune  # noqa: E402 - after the project root is on the path

BATCH = 100
FIGURES = ("recall@1", "recall@5", "recall@10", "any@10", "session any@10")


def setup():
    import django

    django.setup()
    from twin.celery import app

    app.conf.task_always_eager = True  # the read runs in this process, as a worker would run it


def load(client_for, rows, reload: bool):
    from accounts.models import EndUser
    from memory.selectors import Memory, scoped

    by_user = defaultdict(list)
    for row in rows:
        by_user[row["end_user"]].append(row["item"])
    for user, items in by_user.items():
        client = client_for(user)
        existing = EndUser.objects.filter(project__name=tune.PROJECT, external_id=user).first()
        if existing and not reload:
            with scoped(existing.project_id, existing.pk):  # row-level security shows no item outside it
                if Memory(existing).items().filter(read_version__gt=0).count() == len(items):
                    continue
        if existing:
            client("forget", {"all": True})
        started = time.perf_counter()
        for start in range(0, len(items), BATCH):
            answer = client("add", {"items": items[start : start + BATCH], "wait": True})
            assert answer["searchable"], answer
        print(f"loaded {user}: {len(items)} turns in {time.perf_counter() - started:.0f} s", file=sys.stderr)


def bm25_rankings(rows, queries) -> dict[str, list[list[str]]]:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    by_user = defaultdict(list)
    for row in rows:
        by_user[row["end_user"]].append(row["item"])
    out = {}
    for user, items in by_user.items():
        retriever = bm25s.BM25()
        retriever.index(
            bm25s.tokenize([i["text"] for i in items], stopwords="en", stemmer=stemmer, show_progress=False),
            show_progress=False,
        )
        mine = [q for q in queries if q["end_user"] == user]
        tokens = bm25s.tokenize([q["question"] for q in mine], stopwords="en", stemmer=stemmer, show_progress=False)
        found, _ = retriever.retrieve(tokens, k=10, show_progress=False)
        for q, hits in zip(mine, found, strict=True):
            out[q["id"]] = [[items[i]["id"]] for i in hits]
    return out


def scored(rankings: dict[str, list[list[str]]], asked, session_of: dict[str, str]) -> list[dict]:
    """Per question: its category and figures (bench/metrics.py). A hit's thread is its items' session."""
    rows = []
    for q in asked:
        hits = rankings[q["id"]]
        evidence = set(q["evidence_ids"])
        threads = [session_of.get(hit[0], "") if hit else "" for hit in hits]
        rows.append(
            {
                "category": q["category"],
                **metrics.question_figures(hits, evidence, threads, {session_of[e] for e in evidence}),
            }
        )
    return rows


def table(results: dict[str, list[dict]]):
    print("| method | category | n | " + " | ".join(FIGURES) + " |")
    print("|---|---|---|" + "---|" * len(FIGURES))
    for method, rows in results.items():
        for name, figures in metrics.by_category(rows).items():
            label = "**1-4 overall**" if name == "all" else f"{name} {metrics.CATEGORY_NAMES[name]}"
            cells = " | ".join(f"{figures[f][0]:.3f} [{figures[f][1]:.3f}, {figures[f][2]:.3f}]" for f in FIGURES)
            print(f"| {method} | {label} | {figures['n']} | {cells} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reload", action="store_true")
    parser.add_argument("--ablate", action="store_true")
    args = parser.parse_args()
    setup()
    from django.test import Client

    from accounts.services import api_key_create, project_get_or_create
    from bench.locomo_data import items, queries
    from memory.query import features, retrieval

    project, _ = project_get_or_create(name=tune.PROJECT, owner_email="bench@example.com")
    _, key = api_key_create(project=project, access="write", name="locomo bench")
    http = Client()

    def client_for(user):
        def call(tool, body):
            response = http.post(
                f"/v1/memory/{tool}",
                json.dumps(body),
                content_type="application/json",
                headers={"Authorization": f"Bearer {key}", "X-Twin-Account": user},
            )
            assert response.status_code == 200, response.content[:300]
            return response.json()

        return call

    rows = items()
    load(client_for, rows, args.reload)
    session_of = {row["item"]["id"]: row["item"]["session"] for row in rows}
    asked = [q for q in queries() if q["evidence_ids"]]

    started = time.perf_counter()
    data = tune.extract(asked)
    names = features.FEATURES
    fits = tune.leave_one_out(data, names)
    print(f"candidates and fits: {time.perf_counter() - started:.0f} s", file=sys.stderr)

    def ours(with_day: bool) -> tuple[dict, list[float]]:
        rankings, times = {}, []
        shipped = dict(retrieval.WEIGHTS)
        try:
            for q in asked:
                retrieval.WEIGHTS.update(fits[q["end_user"]])  # fitted without this question's conversation
                body = {"query": q["question"], "scope": "passages/", **({"before": q["at"]} if with_day else {})}
                started = time.perf_counter()
                answer = client_for(q["end_user"])("search", body)
                times.append(time.perf_counter() - started)
                rankings[q["id"]] = [hit["item_ids"] for hit in answer["hits"]]
        finally:
            retrieval.WEIGHTS.update(shipped)
        return rankings, times

    without_day, times = ours(with_day=False)
    with_day, _ = ours(with_day=True)
    results = {
        "twin memory, without the day": scored(without_day, asked, session_of),
        "twin memory, with the day": scored(with_day, asked, session_of),
        "BM25 (bm25s)": scored(bm25_rankings(rows, asked), asked, session_of),
    }
    print("Held out: each conversation ranked with the weights fitted on the other four (bench/tune.py).\n")
    table(results)
    overall = {method: metrics.by_category(r)["all"]["recall@10"][0] for method, r in results.items()}
    bm25 = overall["BM25 (bm25s)"]
    print(
        f"\nrecall@10 ratio to BM25 in the same run: {overall['twin memory, without the day'] / bm25:.2f}"
        f" without the day, {overall['twin memory, with the day'] / bm25:.2f} with it"
    )
    t = np.array(times) * 1000
    print(
        f"search through the HTTP route, in-process: p50 {np.percentile(t, 50):.1f} ms, "
        f"p95 {np.percentile(t, 95):.1f} ms"
    )
    if args.ablate:
        headline = overall["twin memory, without the day"]
        print("\n| feature left out (refitted, held out, offline) | recall@10 (1-4) | change |")
        print("|---|---|---|")
        for j, feature in enumerate(names):
            kept = data.features[:, :, j].copy()
            data.features[:, :, j] = 0.0
            r10 = np.mean(
                [
                    r["recall@10"]
                    for r in tune.held_out(data, tune.leave_one_out(data, names), names)
                    if r["category"] in metrics.CATEGORIES
                ]
            )
            data.features[:, :, j] = kept
            print(f"| {feature} | {r10:.3f} | {r10 - headline:+.3f} |")


if __name__ == "__main__":
    main()
