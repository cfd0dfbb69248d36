"""The figures bench/locomo.py reports (bench/metrics.py): pure functions, no database."""

import numpy as np
import pytest

from bench import metrics


def test_recall_counts_the_items_of_the_top_k_hits():
    hits = [["a"], ["b", "c"], ["d"], ["z"]]
    evidence = {"c", "d", "e"}
    assert metrics.recall_at(hits, evidence, 1) == 0
    assert metrics.recall_at(hits, evidence, 2) == pytest.approx(1 / 3)
    assert metrics.recall_at(hits, evidence, 3) == pytest.approx(2 / 3)
    assert metrics.recall_at(hits, evidence, 10) == pytest.approx(2 / 3)  # fewer hits than k
    assert metrics.recall_at([["c"], ["c"], ["c"]], evidence, 3) == pytest.approx(1 / 3)  # found once


def test_any_is_whether_one_evidence_item_is_in_the_top_k():
    hits = [["a"], ["b"], ["c"]]
    assert metrics.any_at(hits, {"c"}, 2) == 0.0
    assert metrics.any_at(hits, {"c"}, 3) == 1.0
    assert metrics.any_at([], {"c"}, 10) == 0.0


def test_session_any_counts_distinct_threads_in_rank_order():
    # Eleven distinct threads, the first repeated five times: repeats take no slot of the ten.
    threads = ["t0"] * 5 + [f"t{i}" for i in range(1, 11)]
    assert metrics.session_any_at(threads, {"t9"}, 10) == 1.0  # the tenth distinct thread
    assert metrics.session_any_at(threads, {"t10"}, 10) == 0.0  # the eleventh
    assert metrics.session_any_at(threads, {"t0", "t10"}, 10) == 1.0
    assert metrics.session_any_at([], {"t0"}, 10) == 0.0


def test_question_figures_names_every_figure():
    got = metrics.question_figures([["a"], ["b"]], {"b", "x"}, ["s1", "s2"], {"s9"})
    assert got == {"recall@1": 0.0, "recall@5": 0.5, "recall@10": 0.5, "any@10": 1.0, "session any@10": 0.0}


def test_bootstrap_interval_is_fixed_by_its_seed_and_as_wide_as_the_sample_says():
    rng = np.random.default_rng(0)
    values = (rng.random(400) < 0.5).astype(float)
    low, high = metrics.bootstrap_interval(values)
    assert (low, high) == metrics.bootstrap_interval(values)  # same seed, same interval
    assert low < values.mean() < high
    # A proportion near 0.5 over 400 questions: 95% half-width about 1.96 * sqrt(0.25 / 400) = 0.049.
    assert 0.08 < high - low < 0.12
    assert metrics.bootstrap_interval(values, seed=1) != (low, high)
    narrow = metrics.bootstrap_interval(values, level=0.5)
    assert low < narrow[0] < narrow[1] < high
    assert metrics.bootstrap_interval([0.7] * 30) == pytest.approx((0.7, 0.7))


def test_by_category_keeps_the_adversarial_out_of_the_overall():
    rows = [
        {"category": 1, "recall@10": 1.0},
        {"category": 1, "recall@10": 0.0},
        {"category": 4, "recall@10": 1.0},
        {"category": 5, "recall@10": 0.0},
    ]
    got = metrics.by_category(rows)
    assert got["all"]["n"] == 3 and got["all"]["recall@10"][0] == pytest.approx(2 / 3)
    assert got[1]["n"] == 2 and got[1]["recall@10"][0] == 0.5
    assert got[5]["n"] == 1 and got[5]["recall@10"][0] == 0.0
    mean, low, high = got[4]["recall@10"]
    assert mean == low == high == 1.0


def test_the_shipped_weights_are_the_per_parameter_median_of_the_folds():
    fits = [
        {"a": 1.0, "b": 0.0},
        {"a": 3.0, "b": 2.0},
        {"a": 2.0, "b": 4.0},
        {"a": 0.0, "b": 2.0},
        {"a": 4.0, "b": 3.0},
    ]
    assert metrics.median_weights(fits) == {"a": 2.0, "b": 2.0}
