"""The figures bench/locomo.py and bench/tune.py report, as plain functions (tests/ops/test_bench_metrics.py).

A question's ranked answer is a list of hits, each hit the item ids of one passage; its evidence is the set of
item ids that answer it. recall@k is the share of the evidence among the items of the top k hits, any@k
whether any of it is there; session any@k whether any of the first k distinct threads of the ranking, in rank
order, holds an evidence item (the session-level figure most published LoCoMo results use).
"""

from collections.abc import Hashable
from typing import Any, TypeVar

import numpy as np

Thread = TypeVar("Thread", bound=Hashable)  # a thread's name (the runs) or number (bench/tune.py)
CATEGORIES = (1, 2, 3, 4)  # 5 (adversarial) is reported apart
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
BOOTSTRAP_RESAMPLES = 2_000
BOOTSTRAP_SEED = 16


def recall_at(hits: list[list[str]], evidence: set[str], k: int) -> float:
    found = {item for hit in hits[:k] for item in hit}
    return len(found & evidence) / len(evidence)


def any_at(hits: list[list[str]], evidence: set[str], k: int) -> float:
    return float(any(item in evidence for hit in hits[:k] for item in hit))


def session_any_at(threads: list[Thread], evidence_threads: set[Thread], k: int) -> float:
    """`threads`: each hit's thread, in rank order (repeats allowed); the first k distinct ones count."""
    distinct = list(dict.fromkeys(threads))[:k]
    return float(any(thread in evidence_threads for thread in distinct))


def question_figures(
    hits: list[list[str]], evidence: set[str], threads: list[str], evidence_threads: set[str]
) -> dict[str, float]:
    return {
        "recall@1": recall_at(hits, evidence, 1),
        "recall@5": recall_at(hits, evidence, 5),
        "recall@10": recall_at(hits, evidence, 10),
        "any@10": any_at(hits, evidence, 10),
        "session any@10": session_any_at(threads, evidence_threads, 10),
    }


def bootstrap_interval(
    values, *, level: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of `values` (questions resampled with replacement, a
    fixed seed: the same values give the same interval)."""
    values = np.asarray(values, float)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    return float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))


def by_category(rows: list[dict]) -> dict:
    """rows: {"category": c, <figure>: value, ...} per question -> {"all" | c: {figure: (mean, low, high), "n": n}},
    "all" over CATEGORIES."""
    groups = {"all": [r for r in rows if r["category"] in CATEGORIES]}
    for category in sorted({r["category"] for r in rows}):
        groups[category] = [r for r in rows if r["category"] == category]
    out: dict[str, dict[str, Any]] = {}
    for name, members in groups.items():
        if not members:
            continue
        figures = [key for key in members[0] if key != "category"]
        out[name] = {"n": len(members)}
        for figure in figures:
            values = [m[figure] for m in members]
            out[name][figure] = (float(np.mean(values)), *bootstrap_interval(values))
    return out


def median_weights(fits: list[dict[str, float]]) -> dict[str, float]:
    """The per-parameter median of the fold fits: the weights that ship."""
    return {name: float(np.median([fit[name] for fit in fits])) for name in fits[0]}
