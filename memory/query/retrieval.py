"""Hybrid retrieval for memory_search: candidates from PostgreSQL, one linear score in Python.

Candidates, all within one end user's memory and its date/scope filters: the CANDIDATES nearest passages
by vector (exactly, the memory read whole, or in a big memory by its own HNSW index from read/own_indexes.py,
with iterative scans), the CANDIDATES best full-text matches on the question's rarer words
(matching_terms), and every one's neighbour either side in its thread. (Sentences bring no candidates of
their own, which would need a second HNSW index for passages the other sources find anyway; they still score
a candidate as `maxsent`.) Each candidate then gets the features that help on conversation
memory (features.py) and their sum under WEIGHTS decides the order: the weights come from
memory/query/weights.json, which bench/tune.py writes, never from a hand. The SQL of both sources and of the
features runs on the end user's Memory handle (memory/selectors.py), which scopes it to them; this module
chooses and scores. Its latency: bench/README.md "Search latency"; what each feature buys on LoCoMo:
bench/README.md "Search quality".
"""

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.db import connection

from memory.model import embeddings

from ..selectors import Memory, PassageFilters, TermStatistics, named_rows
from . import features

# From each source: enough that recall hardly gains from more, while each more candidate costs every search
# its features (bench/README.md "Search latency").
CANDIDATES = 35
MATCH_BUDGET = 1_000  # passages the text source ranks at most (see matching_terms)
# The weight of each feature (features.FEATURES), as bench/tune.py fitted them on LoCoMo: never set by hand.
WEIGHTS_FILE = Path(__file__).with_name("weights.json")
WEIGHTS: dict[str, float] = json.loads(WEIGHTS_FILE.read_text())["weights"]
if set(WEIGHTS) != set(features.FEATURES):
    raise RuntimeError(
        f"{WEIGHTS_FILE} weighs {sorted(WEIGHTS)}, not the features {sorted(features.FEATURES)}: run bench/tune.py"
    )


@dataclass(frozen=True)
class Candidates:
    """A question's candidates: passage ids, their threads, and what each is scored on (features.FEATURES)."""

    ids: np.ndarray
    threads: np.ndarray
    features: np.ndarray


def query_terms(query: str) -> list[str]:
    """The question's words normalised as the passages' full text is (English stemming, stop words out)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT tsvector_to_array(to_tsvector('english', %s)) AS terms", [query])
        return list(named_rows(cursor)[0]["terms"] or [])


def matching_terms(terms: list[str], df: dict[str, int]) -> list[str]:
    """The terms the text source matches on: rarest first, while together they match at most MATCH_BUDGET
    passages. Ranking every match costs a read of each one's full text, and in a big memory a common word
    (the end user's own name) matches tens of thousands; the vector source covers those. A memory smaller
    than the budget always matches on every term."""
    chosen, total = [], 0
    for term in sorted(terms, key=lambda t: df.get(t, 0)):
        total += df.get(term, 0)
        if total > MATCH_BUDGET:
            break
        chosen.append(term)
    return chosen


def rank(memory: Memory, query: str, filters: PassageFilters, limit: int) -> list[tuple[int, float]]:
    """(passage id, score) for the best `limit` passages of the memory, best first."""
    rows, statistics = _candidate_rows(memory, query, filters)
    if not rows:
        return []
    return _score(rows, statistics, query, limit)


def candidates(memory: Memory, query: str, filters: PassageFilters) -> Candidates:
    """What rank weighs, before it weighs it: bench/tune.py fits the weights on these."""
    rows, statistics = _candidate_rows(memory, query, filters)
    return _candidates(rows, statistics, query)


def _candidate_rows(memory: Memory, query: str, filters: PassageFilters) -> tuple[list[dict], TermStatistics]:
    # The model embeds the question (releasing the GIL) while the database finds the text matches.
    vector = embeddings.embed_soon(query)
    statistics = memory.term_statistics(query)
    matching = matching_terms(statistics.terms, statistics.document_frequency)
    ids = memory.text_candidates(matching, filters, CANDIDATES) if matching else []
    # the vector source runs in the features statement: one round trip for both
    return memory.candidate_features(ids, vector.result(), statistics.terms, filters, CANDIDATES), statistics


def explain(memory: Memory, query: str, filters: PassageFilters) -> dict[str, str]:
    """How the database finds a question's candidates: EXPLAIN ANALYZE of each source, by name."""
    statistics = memory.term_statistics(query)
    matching = matching_terms(statistics.terms, statistics.document_frequency)
    return memory.candidate_plans(matching, embeddings.embed_one(query), filters, CANDIDATES)


def _candidates(rows: list[dict], statistics: TermStatistics, query: str) -> Candidates:
    if not rows:
        return Candidates(np.zeros(0, int), np.zeros(0, int), np.zeros((0, len(features.FEATURES))))
    return Candidates(
        np.array([r["id"] for r in rows]),
        np.array([r["thread_id"] for r in rows]),
        features.matrix(rows, statistics, query),
    )


def weight_vector(weights: dict[str, float]) -> np.ndarray:
    return np.array([weights[name] for name in features.FEATURES], float)


def best(found: Candidates, weights: dict[str, float], limit: int) -> list[tuple[int, float]]:
    """(passage id, score) of the best `limit` candidates under `weights`, best first (ties: SQL order)."""
    score = found.features @ weight_vector(weights)
    order = np.argsort(-score, kind="stable")[:limit]
    return [(int(found.ids[i]), float(score[i])) for i in order]


def _score(rows: list[dict], statistics: TermStatistics, query: str, limit: int) -> list[tuple[int, float]]:
    return best(_candidates(rows, statistics, query), WEIGHTS, limit)
