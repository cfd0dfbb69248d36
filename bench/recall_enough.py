"""How well memory_recall's `enough` separates answerable questions from unanswerable ones, on LoCoMo.

Reuses the LoCoMo memories bench/locomo.py loads into the development database (project "LoCoMo bench", end
users locomo_conv-26 …; run `.venv/bin/python bench/locomo.py` once first); loads nothing itself. Every
question is asked as of its day without a model (the deterministic path); categories 1-4 are answerable,
category 5 (adversarial: about something never said) is not. Reports the ROC AUC of `enough` and the accuracy
at the best threshold, against always saying "answerable".

    .venv/bin/python bench/recall_enough.py [--fit]

--fit also fits the logistic weights on the features (standardised, L2, gradient descent), reports their
leave-one-conversation-out AUC, and prints the WEIGHTS and BIAS to paste into memory/connectors/brief.py.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """The probability that an answerable question scores above an unanswerable one (ties count half)."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def best_accuracy(scores: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """(accuracy, threshold) of the best cut "enough >= threshold means answerable"."""
    best = (float(labels.mean()), 0.0)  # everything answerable
    for t in np.unique(scores):
        accuracy = float(((scores >= t) == labels).mean())
        if accuracy > best[0]:
            best = (accuracy, float(t))
    return best


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, steps: int = 3000) -> tuple[np.ndarray, float]:
    """Logistic regression on raw features (standardised inside, returned in raw units)."""
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = (x - mean) / std
    w, b = np.zeros(x.shape[1]), 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(z @ w + b)))
        w -= 0.5 * (z.T @ (p - y) / len(y) + l2 * w)
        b -= 0.5 * float((p - y).mean())
    return w / std, b - float((w / std) @ mean)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fit", action="store_true")
    args = parser.parse_args()
    import django

    django.setup()
    from accounts.models import EndUser
    from bench.locomo_data import queries
    from memory.connectors import brief
    from memory.selectors import Memory
    from memory.validation import parse_date

    memories = {u.external_id: Memory(u) for u in EndUser.objects.filter(project__name="LoCoMo bench")}
    asked = [q for q in queries() if q["end_user"] in memories]
    if not asked:
        sys.exit("No LoCoMo memories in the development database: run .venv/bin/python bench/locomo.py first.")
    names = list(brief.WEIGHTS)
    rows, labels, users, shipped = [], [], [], []
    started = time.perf_counter()
    for q in asked:
        memory = memories[q["end_user"]]
        with memory.scoped():  # row-level security shows a memory's rows inside its scope only
            kept = brief.keep(memory, q["question"], parse_date(q["at"], "as_of"))
            values = brief.features(memory, kept)
        rows.append([values[n] for n in names])
        labels.append(int(q["category"] != 5))
        users.append(q["end_user"])
        shipped.append(brief.enough(values))
    x, y, by_user, as_shipped = np.array(rows), np.array(labels), np.array(users), np.array(shipped)
    per = (time.perf_counter() - started) / len(asked) * 1000
    print(f"{len(asked)} questions ({int(y.sum())} answerable, {int((1 - y).sum())} adversarial), {per:.0f} ms each")
    print("\n| score | ROC AUC | accuracy at best threshold | threshold | always 'answerable' |")
    print("|---|---|---|---|---|")

    def report(label, scores):
        accuracy, threshold = best_accuracy(scores, y)
        print(f"| {label} | {auc(scores, y):.3f} | {accuracy:.3f} | {threshold:.2f} | {y.mean():.3f} |")

    report("`enough` as shipped", as_shipped)
    for i, n in enumerate(names):
        report(f"feature {n} alone", x[:, i])
    if args.fit:
        held_out = np.zeros(len(y))
        for user in np.unique(by_user):
            w, b = fit(x[by_user != user], y[by_user != user])
            held_out[by_user == user] = 1 / (1 + np.exp(-(x[by_user == user] @ w + b)))
        report("refitted, leave-one-conversation-out", held_out)
        w, b = fit(x, y)
        print("\nWEIGHTS = {" + ", ".join(f'"{n}": {v:.3f}' for n, v in zip(names, w, strict=True)) + "}")
        print(f"BIAS = {b:.3f}")


if __name__ == "__main__":
    main()
