"""Fits the ranking's weights (memory/query/weights.json) on the LoCoMo dev half: deterministic, offline.

Each question's candidates and their features (features.FEATURES) are computed once, through the product's
own search code (retrieval.candidates with the filters of a ranked search, `scope: "passages/"`, asked
without a day, as an assistant asks), from the memories bench/locomo.py loads. The weights are then searched
offline with numpy: coordinate ascent over a fixed grid, features in a fixed order, from every weight at 1,
keeping a change only when it strictly raises the objective (mean recall@10 + mean any@10 over categories
1-4), until a pass changes nothing. Leave one conversation out: fit on four, score the fifth, for each of
the five; the weights that ship are the per-parameter median of the five fold fits.

    .venv/bin/python bench/tune.py [--dry-run]     # --dry-run: print, do not write weights.json

The held-out figures it prints are offline (from the same candidates); bench/locomo.py asks through HTTP.
"""

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")

from bench import metrics  # noqa: E402 - after the project root is on the path

GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
START = 1.0
PASSES_MAX = 8
PROJECT = "LoCoMo bench"


@dataclass
class Data:
    """Every question's candidates, padded to the most any question has (`valid` marks the real ones)."""

    features: np.ndarray  # (questions, candidates, features)
    valid: np.ndarray  # (questions, candidates) bool
    evidence: np.ndarray  # (questions, candidates) int64: bit j set when the candidate holds evidence item j
    n_evidence: np.ndarray  # (questions,)
    conversation: np.ndarray  # (questions,) str
    category: np.ndarray  # (questions,) int
    threads: np.ndarray  # (questions, candidates) the candidate's thread id (session any@10)
    evidence_threads: list[set[int]]  # per question, the threads holding an evidence item


def pad(rows: list[dict], n_features: int) -> Data:
    """rows: per question {"features": (c, f), "evidence": [c ints], "threads": [c], "n_evidence",
    "conversation", "category", "evidence_threads"} -> Data."""
    width = max(1, max(len(r["evidence"]) for r in rows))
    q = len(rows)
    data = Data(
        np.zeros((q, width, n_features)),
        np.zeros((q, width), bool),
        np.zeros((q, width), np.int64),
        np.array([r["n_evidence"] for r in rows]),
        np.array([r["conversation"] for r in rows]),
        np.array([r["category"] for r in rows]),
        np.full((q, width), -1, np.int64),
        [set(r["evidence_threads"]) for r in rows],
    )
    for i, r in enumerate(rows):
        c = len(r["evidence"])
        data.features[i, :c] = r["features"]
        data.valid[i, :c] = True
        data.evidence[i, :c] = r["evidence"]
        data.threads[i, :c] = r["threads"]
    return data


def order(data: Data, weights: np.ndarray, k: int, select: np.ndarray | None = None) -> np.ndarray:
    """(questions, k): the candidates' columns in rank order, as retrieval.best ranks them (stable: ties
    keep the database's order); past a question's candidates, padding that holds no evidence."""
    rows = slice(None) if select is None else select
    score = np.where(data.valid[rows], data.features[rows] @ weights, -np.inf)
    return np.argsort(-score, axis=1, kind="stable")[:, :k]


def figures(data: Data, weights: np.ndarray, select: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per question (of `select`): recall@1/5/10, any@10, session any@10."""
    rows = np.arange(len(data.category)) if select is None else np.flatnonzero(select)
    top = order(data, weights, 10, rows)
    found = np.bitwise_count(np.bitwise_or.accumulate(np.take_along_axis(data.evidence[rows], top, 1), axis=1))
    n = data.n_evidence[rows]
    threads = np.take_along_axis(data.threads[rows], top, 1)
    session = [
        metrics.session_any_at(list(t), data.evidence_threads[i], 10) for i, t in zip(rows, threads, strict=True)
    ]
    return {
        "recall@1": found[:, 0] / n,
        "recall@5": found[:, 4] / n,
        "recall@10": found[:, 9] / n,
        "any@10": (found[:, 9] > 0).astype(float),
        "session any@10": np.array(session),
    }


def objective(data: Data, weights: np.ndarray, select: np.ndarray) -> float:
    top = order(data, weights, 10, select)
    found = np.bitwise_count(np.bitwise_or.accumulate(np.take_along_axis(data.evidence[select], top, 1), axis=1))
    return float(np.mean(found[:, 9] / data.n_evidence[select]) + np.mean(found[:, 9] > 0))


def fit(data: Data, select: np.ndarray, names: tuple[str, ...]) -> dict[str, float]:
    """Coordinate ascent over GRID on the questions `select` (categories 1-4 among them)."""
    select = select & np.isin(data.category, metrics.CATEGORIES)
    weights = np.full(len(names), START)
    if not select.any():
        return {name: START for name in names}
    best = objective(data, weights, select)
    for _ in range(PASSES_MAX):
        changed = False
        for j in range(len(names)):
            for value in GRID:
                if value == weights[j]:
                    continue
                trial = weights.copy()
                trial[j] = value
                score = objective(data, trial, select)
                if score > best + 1e-12:
                    best, weights, changed = score, trial, True
        if not changed:
            break
    return {name: float(w) for name, w in zip(names, weights, strict=True)}


def leave_one_out(data: Data, names: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """conversation -> the weights fitted on the other conversations."""
    return {c: fit(data, data.conversation != c, names) for c in sorted(set(data.conversation))}


def held_out(data: Data, fits: dict[str, dict[str, float]], names: tuple[str, ...]) -> list[dict]:
    """Per question, its figures under the weights fitted without its conversation."""
    rows = []
    for conversation, weights in fits.items():
        select = data.conversation == conversation
        got = figures(data, np.array([weights[n] for n in names]), select)
        for i, index in enumerate(np.flatnonzero(select)):
            rows.append({"category": int(data.category[index]), **{k: float(v[i]) for k, v in got.items()}})
    return rows


def extract(asked: list[dict], *, with_day: bool = False) -> Data:
    """Each question's candidates through retrieval.candidates, in the memory bench/locomo.py loaded."""
    from accounts.models import EndUser
    from memory.query import features, retrieval, search
    from memory.selectors import Memory, scoped
    from memory.validation import parse_date

    rows = []
    for user in sorted({q["end_user"] for q in asked}):
        end_user = EndUser.objects.filter(project__name=PROJECT, external_id=user).first()
        if end_user is None:
            raise SystemExit(f"{user} is not loaded: run bench/locomo.py first")
        memory = Memory(end_user)
        with scoped(end_user.project_id, end_user.pk):
            passages = list(memory.passages().values_list("pk", "item_ids", "thread_id"))
            items_of = {pk: set(items) for pk, items, _ in passages}
            thread_of_item = {item: thread for _, items, thread in passages for item in items}
            for q in (q for q in asked if q["end_user"] == user):
                evidence = list(q["evidence_ids"])
                before = parse_date(q["at"], "before") if with_day else None
                found = retrieval.candidates(
                    memory, q["question"], search.passage_filters(scope="passages/", before=before)
                )
                bits = [sum(1 << j for j, e in enumerate(evidence) if e in items_of[int(pk)]) for pk in found.ids]
                rows.append(
                    {
                        "features": found.features,
                        "evidence": bits,
                        "threads": list(found.threads),
                        "n_evidence": len(evidence),
                        "conversation": user,
                        "category": q["category"],
                        "evidence_threads": {thread_of_item[e] for e in evidence if e in thread_of_item},
                    }
                )
    return pad(rows, len(features.FEATURES))


def setup():
    import django

    django.setup()


def report(title: str, rows: list[dict]):
    print(f"\n{title}\n")
    print("| category | n | recall@1 | recall@5 | recall@10 | any@10 | session any@10 |")
    print("|---|---|---|---|---|---|---|")
    for name, figures_ in metrics.by_category(rows).items():
        label = "1-4 overall" if name == "all" else f"{name} {metrics.CATEGORY_NAMES[name]}"
        cells = " | ".join(
            f"{figures_[k][0]:.3f} [{figures_[k][1]:.3f}, {figures_[k][2]:.3f}]"
            for k in ("recall@1", "recall@5", "recall@10", "any@10", "session any@10")
        )
        print(f"| {label} | {figures_['n']} | {cells} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dry-run", action="store_true", help="print the fits, do not write weights.json")
    args = parser.parse_args()
    setup()
    from bench.locomo_data import queries
    from memory.query import features, retrieval

    asked = [q for q in queries() if q["evidence_ids"]]
    data = extract(asked)
    names = features.FEATURES
    fits = leave_one_out(data, names)
    print("| fold (held out) | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for conversation, weights in fits.items():
        print(f"| {conversation} | " + " | ".join(f"{weights[n]:g}" for n in names) + " |")
    shipped = metrics.median_weights(list(fits.values()))
    print("| **median (ships)** | " + " | ".join(f"{shipped[n]:g}" for n in names) + " |")
    report("Held out (offline, leave one conversation out, without the day):", held_out(data, fits, names))
    if not args.dry_run:
        retrieval.WEIGHTS_FILE.write_text(
            json.dumps(
                {
                    "written by": "bench/tune.py: the per-parameter median of the five leave-one-conversation-out fits",
                    "weights": shipped,
                    "folds": fits,
                },
                indent=2,
            )
            + "\n"
        )
        print(f"\nwrote {retrieval.WEIGHTS_FILE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
