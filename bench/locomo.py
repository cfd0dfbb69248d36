"""Search quality on LoCoMo (half: 5 long conversations, 999 questions), turn level.

Loads each conversation into its own end user through the product's own add path (POST /v1/memory/add, the
real background read and embeddings, run in-process), then asks every question through POST
/v1/memory/search as of the question's day and scores the ranked hits against the turns that answer it:
recall@1/5/10 and any@10, overall (categories 1-4) and per category, category 5 (adversarial) apart.
A BM25 baseline (bm25s, English stop words, Snowball stemmer, over each conversation's turns) runs on the
same questions in the same run.

    .venv/bin/python bench/locomo.py [--reload] [--ablate]

The loaded memories are kept in the development database (project "LoCoMo bench") and reused; --reload
loads them again. --ablate also reports the overall figures with each ranking feature switched off.
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
BATCH = 100


def setup():
    import django

    django.setup()
    from twin.celery import app

    app.conf.task_always_eager = True  # the read runs in this process, as a worker would run it


def load(client_for, rows, reload: bool):
    from accounts.models import EndUser

    by_user = defaultdict(list)
    for row in rows:
        by_user[row["end_user"]].append(row["item"])
    for user, items in by_user.items():
        client = client_for(user)
        existing = EndUser.objects.filter(project__name="LoCoMo bench", external_id=user).first()
        if existing and not reload and existing.items.filter(read_version__gt=0).count() == len(items):
            continue
        if existing:
            client("forget", {"all": True})
        started = time.perf_counter()
        for start in range(0, len(items), BATCH):
            answer = client("add", {"items": items[start : start + BATCH], "wait": True})
            assert answer["searchable"], answer
        print(f"loaded {user}: {len(items)} turns in {time.perf_counter() - started:.0f} s", file=sys.stderr)


def bm25_rankings(rows, queries):
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    by_user = defaultdict(list)
    for row in rows:
        by_user[row["end_user"]].append(row["item"])
    out = {}
    for user, items in by_user.items():
        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize([i["text"] for i in items], stopwords="en", stemmer=stemmer, show_progress=False),
                        show_progress=False)
        mine = [q for q in queries if q["end_user"] == user]
        tokens = bm25s.tokenize([q["question"] for q in mine], stopwords="en", stemmer=stemmer, show_progress=False)
        found, _ = retriever.retrieve(tokens, k=10, show_progress=False)
        for q, hits in zip(mine, found):
            out[q["id"]] = [items[i]["id"] for i in hits]
    return out


def score(rankings: dict, queries) -> dict:
    """category -> (recall@1, recall@5, recall@10, any@10, n)."""
    per = defaultdict(list)
    for q in queries:
        evidence = set(q["evidence_ids"])
        got = rankings[q["id"]]
        figures = [len(evidence & set(got[:k])) / len(evidence) for k in (1, 5, 10)]
        figures.append(float(bool(evidence & set(got[:10]))))
        per[q["category"]].append(figures)
        if q["category"] in (1, 2, 3, 4):
            per["all"].append(figures)
    return {c: (*np.mean(v, axis=0), len(v)) for c, v in per.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reload", action="store_true")
    parser.add_argument("--ablate", action="store_true")
    args = parser.parse_args()
    setup()
    from django.test import Client

    from accounts.services import api_key_create, project_get_or_create
    from bench.locomo_data import items, queries
    from memory.query import retrieval

    project, _ = project_get_or_create(name="LoCoMo bench", owner_email="bench@example.com")
    _, key = api_key_create(project=project, access="write", name="locomo bench")
    http = Client()

    def client_for(user):
        def call(tool, body):
            response = http.post(f"/v1/memory/{tool}", json.dumps(body), content_type="application/json",
                                 headers={"Authorization": f"Bearer {key}", "X-Twin-Account": user})
            assert response.status_code == 200, response.content[:300]
            return response.json()
        return call

    rows = items()
    load(client_for, rows, args.reload)
    asked = [q for q in queries() if q["evidence_ids"]]

    def ours() -> tuple[dict, list[float]]:
        rankings, times = {}, []
        for q in asked:
            started = time.perf_counter()
            answer = client_for(q["end_user"])("search", {"query": q["question"], "before": q["at"]})
            times.append(time.perf_counter() - started)
            rankings[q["id"]] = [i for hit in answer["hits"] for i in hit["item_ids"]]
        return rankings, times

    mine, times = ours()
    results = {"twin memory": score(mine, asked), "BM25 (bm25s)": score(bm25_rankings(rows, asked), asked)}
    print("| method | category | n | recall@1 | recall@5 | recall@10 | any@10 |")
    print("|---|---|---|---|---|---|---|")
    names = {"all": "1-4 overall", 1: "1 multi-hop", 2: "2 temporal", 3: "3 open-domain", 4: "4 single-hop",
             5: "5 adversarial"}
    for method, result in results.items():
        for category in ("all", 1, 2, 3, 4, 5):
            if category in result:
                r1, r5, r10, a10, n = result[category]
                print(f"| {method} | {names[category]} | {n} | {r1:.3f} | {r5:.3f} | {r10:.3f} | {a10:.3f} |")
    ours_r10, bm_r10 = results["twin memory"]["all"][2], results["BM25 (bm25s)"]["all"][2]
    t = np.array(times) * 1000
    print(f"\nrecall@10 ratio to BM25 in the same run: {ours_r10 / bm_r10:.2f}")
    print(f"search through the HTTP route, in-process: p50 {np.percentile(t, 50):.1f} ms, p95 {np.percentile(t, 95):.1f} ms")
    if args.ablate:
        print("\n| feature switched off | recall@10 (1-4) | change |")
        print("|---|---|---|")
        saved = dict(retrieval.WEIGHTS)
        for feature in saved:
            retrieval.WEIGHTS[feature] = 0.0
            r10 = score(ours()[0], asked)["all"][2]
            retrieval.WEIGHTS.update(saved)
            print(f"| {feature} | {r10:.3f} | {r10 - ours_r10:+.3f} |")


if __name__ == "__main__":
    main()
