"""bench/tune.py's offline ranking, fit and leave-one-out, on small made-up candidate sets (no database)."""

import numpy as np
import pytest

from bench import metrics, tune

NAMES = ("good", "noise")


def question(conversation, features, evidence, *, category=1, n_evidence=None, threads=None):
    """One question: each candidate's features and the bits of the evidence items it holds."""
    return {
        "features": np.array(features, float),
        "evidence": evidence,
        "threads": threads or list(range(len(evidence))),
        "conversation": conversation,
        "category": category,
        "n_evidence": n_evidence or max(1, bin(np.bitwise_or.reduce(evidence)).count("1")),
        "evidence_threads": {t for t, bits in zip(threads or range(len(evidence)), evidence, strict=True) if bits},
    }


def made_up(seed=0, conversations=("a", "b", "c", "d", "e"), questions=30, good=0):
    """Forty candidates a question, one holding its evidence: feature `good` marks it (plus noise), the
    other feature misleads."""
    rng = np.random.default_rng(seed)
    rows = []
    for conversation in conversations:
        for _ in range(questions):
            features = rng.random((40, 2))
            answer = int(rng.integers(40))
            features[answer, good] += 0.5
            features[answer, 1 - good] -= 1.0
            rows.append(question(conversation, features, [1 if i == answer else 0 for i in range(40)]))
    return tune.pad(rows, 2)


def test_order_is_stable_on_ties_and_leaves_padding_last():
    data = tune.pad(
        [question("a", [[1, 0], [1, 0], [2, 0]], [0, 1, 0]), question("a", [[0, 0]] * 5, [0, 0, 0, 0, 1])], 2
    )
    got = tune.order(data, np.array([1.0, 0.0]), 3)
    assert got[0].tolist() == [2, 0, 1]  # the tie between 0 and 1 keeps their order
    assert got[1].tolist() == [0, 1, 2]
    assert data.valid[0].tolist() == [True] * 3 + [False] * 2


def test_figures_score_the_ranking_the_weights_give():
    rows = [
        question(
            "a",
            [[0.9, 0], [0.1, 0], [0.5, 0]] + [[0.0, 0]] * 10,
            [0, 1, 2] + [0] * 10,
            n_evidence=2,
            threads=[7, 8, 9] + list(range(10, 20)),
        ),
        question("a", [[float(i), 0] for i in range(12)], [1] + [0] * 11),
    ]  # its evidence ranks last
    data = tune.pad(rows, 2)
    got = tune.figures(data, np.array([1.0, 0.0]))
    # Question 0 ranks 0, 2, 1: bit 2 (evidence item 2) at rank 2, bit 1 at rank 3.
    assert got["recall@1"].tolist() == [0.0, 0.0]
    assert got["recall@5"].tolist() == [1.0, 0.0]
    assert got["recall@10"].tolist() == [1.0, 0.0]  # twelve candidates: the evidence is 12th
    assert got["any@10"].tolist() == [1.0, 0.0]
    assert got["session any@10"].tolist() == [1.0, 0.0]
    reversed_ = tune.figures(data, np.array([-1.0, 0.0]))
    assert reversed_["recall@1"].tolist() == [0.0, 1.0]


def test_fit_finds_the_feature_that_tells_and_is_deterministic():
    data = made_up()
    everything = np.ones(len(data.category), bool)
    weights = tune.fit(data, everything, NAMES)
    assert weights == tune.fit(data, everything, NAMES)
    assert set(weights.values()) <= set(tune.GRID)
    assert weights["good"] > 0 and weights["noise"] == 0.0
    fitted = tune.figures(data, np.array([weights[n] for n in NAMES]))["recall@10"].mean()
    assert fitted > tune.figures(data, np.array([0.0, 1.0]))["recall@10"].mean() + 0.3


def test_fit_ignores_the_adversarial_category():
    data = made_up(conversations=("a",))
    data.category[:] = 5
    # No question of categories 1-4: nothing to gain, so every weight stays where it starts.
    assert tune.fit(data, np.ones(len(data.category), bool), NAMES) == {"good": tune.START, "noise": tune.START}


def test_leave_one_out_never_fits_on_the_conversation_it_scores():
    # In "e" the other feature tells; fitted on a-d (where "good" tells), e is ranked badly.
    first = made_up(conversations=("a", "b", "c", "d"))
    last = made_up(seed=1, conversations=("e",), good=1, questions=200)
    rows = []
    for data in (first, last):
        for i in range(len(data.category)):
            c = int(data.valid[i].sum())
            rows.append(
                {
                    "features": data.features[i, :c],
                    "evidence": list(data.evidence[i, :c]),
                    "threads": list(data.threads[i, :c]),
                    "n_evidence": int(data.n_evidence[i]),
                    "conversation": str(data.conversation[i]),
                    "category": int(data.category[i]),
                    "evidence_threads": data.evidence_threads[i],
                }
            )
    data = tune.pad(rows, 2)
    fits = tune.leave_one_out(data, NAMES)
    assert sorted(fits) == ["a", "b", "c", "d", "e"]
    assert fits["e"]["good"] > fits["e"]["noise"]
    assert fits["e"] == tune.fit(data, data.conversation != "e", NAMES)
    assert fits["e"] != tune.fit(data, np.ones(len(rows), bool), NAMES)  # e would pull the fit its way
    held = tune.held_out(data, fits, NAMES)
    assert len(held) == len(rows)
    e = [
        r["recall@10"]
        for r, c in zip(held, data.conversation[np.argsort(data.conversation, kind="stable")], strict=True)
        if c == "e"
    ]
    in_sample = tune.figures(data, np.array([fits["e"][n] for n in NAMES]), data.conversation == "a")
    assert np.mean(e) < in_sample["recall@10"].mean() - 0.2
    shipped = metrics.median_weights(list(fits.values()))
    assert shipped == {n: pytest.approx(np.median([f[n] for f in fits.values()])) for n in NAMES}


def test_the_offline_order_is_the_order_search_gives():
    # bench/tune.py fits on tune.order; search ranks with retrieval.best: the same candidates and weights must
    # give the same top ten, ties included.
    from memory.query import features, retrieval

    rng = np.random.default_rng(3)
    names = features.FEATURES
    weights = {name: float(w) for name, w in zip(names, rng.choice(tune.GRID, len(names)), strict=True)}
    rows = []
    for _ in range(20):
        n = int(rng.integers(3, 40))
        matrix = rng.integers(0, 3, (n, len(names))).astype(float)  # small integers: many ties
        rows.append(question("a", matrix, [0] * n))
    data = tune.pad(rows, len(names))
    offline = tune.order(data, retrieval.weight_vector(weights), 10)
    for i, r in enumerate(rows):
        found = retrieval.Candidates(
            np.arange(100, 100 + len(r["evidence"])), np.zeros(len(r["evidence"]), int), r["features"]
        )
        online = [pid - 100 for pid, _ in retrieval.best(found, weights, 10)]
        assert offline[i][: len(online)].tolist() == online
