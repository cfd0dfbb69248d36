"""Hybrid retrieval for memory_search: candidates from PostgreSQL, one linear score in Python.

Candidates, all within one end user's memory and its date/scope filters: the CANDIDATES nearest passages
by vector (pgvector HNSW with iterative scans, a big memory's own indexes from read/own_indexes.py, or an exact
scan when the memory is small), the CANDIDATES best full-text matches on the question's rarer words
(matching_terms), and every one's neighbour either side in its thread. (A third source, the passages of
the nearest sentences, found nothing the others missed on LoCoMo and cost a second HNSW index; sentences
still score a candidate as `maxsent`.) Each candidate then gets the features that help on conversation
memory and the weighted sum below decides the order. The SQL of both sources and of the features runs on
the end user's Memory handle (memory/selectors.py), which scopes it to them; this module chooses and
scores. Latency at 1M passages is in bench/README.md "Search latency" (bench/search_latency.py); the
recipe and what each feature bought on LoCoMo are in bench/README.md (bench/locomo.py).
"""

import math
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import numpy as np
from django.db import connection

from .. import embeddings
from ..selectors import Memory, PassageFilters, TermStatistics, named_rows

# From each source. 35 instead of 50 saves ~3 ms for recall@10 0.808 -> 0.807; 25 would give 0.801
# (bench/README.md "Search latency").
CANDIDATES = 35
MATCH_BUDGET = 1_000  # passages the text source ranks at most (see matching_terms)
K1, B = 0.9, 0.4  # BM25
WEIGHTS = {
    "bm": 0.75,  # BM25 over the question's words, scaled by the best candidate's
    "cos_t": 0.75,  # the passage's vector
    "cos_prev": 1.0,  # the passage read with the one before it
    "cos_next": 2.0,  # the next passage read with this one: a question often matches a turn and its answer
    "maxsent": 0.75,  # the passage's best sentence
    "spk": 1.125,  # the question names the passage's author (or what it is about)
    "nb_bm": 0.75,  # the best of its neighbours' BM25
    "nb_maxsent": 0.75,
    "nb_cos_t": 0.3,
    "sess_bm": 0.75,  # the best BM25 in its thread: the right conversation, then the right turn
    "sess_cos_t": 2.0,
    "sess_maxsent": 1.0,
    "len": 0.5,  # log characters: longer turns say more
    "datem": 0.75,  # the question names the month or year the passage is from
    "dayM": 2.0,  # the question names the passage's day
}
# Below any similarity or scaled score (they lie in [-1, 1]): where a thread's best starts before its first.
BELOW_ANY_SCORE = -9.0
MONTHS = "january february march april may june july august september october november december".split()
_MONTH = "|".join(MONTHS)
_DAY = re.compile(rf"(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH}),?\s+(\d{{4}})|({_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})")
_YEAR = re.compile(r"\b((?:19|20)\d\d)\b")


def query_terms(query: str) -> list[str]:
    """The question's words normalised as the passages' full text is (English stemming, stop words out)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT tsvector_to_array(to_tsvector('english', %s)) AS terms", [query])
        return list(named_rows(cursor)[0]["terms"] or [])


def _date_features(question: str, days: list[datetime]) -> tuple[np.ndarray, np.ndarray]:
    q = question.lower()
    months = {MONTHS.index(m) + 1 for m in MONTHS if m in q}
    years = {int(y) for y in _YEAR.findall(q)}
    named_days = set()
    for m in _DAY.finditer(q):
        day, month, year = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(5), m.group(4), m.group(6))
        named_days.add((int(year), MONTHS.index(month) + 1, int(day)))
    month_or_year = np.array([(not months or d.month in months) and (not years or d.year in years)
                              for d in days], float) if (months or years) else np.zeros(len(days))
    exact_day = np.array([(d.year, d.month, d.day) in named_days for d in days], float)
    return month_or_year, exact_day


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


_embedder = ThreadPoolExecutor(max_workers=2, thread_name_prefix="embed")


def rank(memory: Memory, query: str, filters: PassageFilters, limit: int) -> list[tuple[int, float]]:
    """(passage id, score) for the best `limit` passages of the memory, best first."""
    # The model embeds the question (releasing the GIL) while the database finds the text matches.
    vector = _embedder.submit(embeddings.embed_one, query)
    statistics = memory.term_statistics(query)
    matching = matching_terms(statistics.terms, statistics.document_frequency)
    ids = memory.text_candidates(matching, filters, CANDIDATES) if matching else []
    ids += memory.vector_candidates(vector.result(), filters, CANDIDATES)
    if not ids:
        return []
    rows = memory.candidate_features(ids, vector.result(), statistics.terms, filters)
    return _score(rows, statistics, query, limit)


def explain(memory: Memory, query: str, filters: PassageFilters) -> dict[str, str]:
    """How the database finds a question's candidates: EXPLAIN ANALYZE of each source, by name."""
    statistics = memory.term_statistics(query)
    matching = matching_terms(statistics.terms, statistics.document_frequency)
    return memory.candidate_plans(matching, embeddings.embed_one(query), filters, CANDIDATES)


def _bm25(rows: list[dict], statistics: TermStatistics) -> np.ndarray:
    """BM25 of each candidate over the question's terms, with the memory's own document frequencies."""
    passages, average, df = statistics.passages, statistics.average_length, statistics.document_frequency
    tf = [dict(zip(r["terms"], r["counts"])) if r["terms"] else {} for r in rows]
    weights = {t: math.log(1 + (passages - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5))
               for t in statistics.terms if df.get(t)}
    lengths = np.array([r["lexemes"] or 0 for r in rows], float)
    bm = np.zeros(len(rows))
    for term, idf in weights.items():
        freq = np.array([counts.get(term, 0) for counts in tf], float)
        # max(average, 1e-9): a memory of empty passages has average 0; never divide by it
        bm += idf * freq * (K1 + 1) / (freq + K1 * (1 - B + B * lengths / max(average, 1e-9)))
    return bm


def _score(rows: list[dict], statistics: TermStatistics, query: str, limit: int) -> list[tuple[int, float]]:
    ids = np.array([r["id"] for r in rows])
    thread = np.array([r["thread_id"] for r in rows])
    seq = np.array([r["seq"] for r in rows])
    f = {}
    bm = _bm25(rows, statistics)
    f["bm"] = bm / bm.max() if bm.max() > 0 else bm
    f["cos_t"] = np.array([r["cos_t"] for r in rows], float)
    f["cos_prev"] = np.array([r["cos_prev"] for r in rows], float)
    f["cos_next"] = np.array([r["cos_next"] if r["cos_next"] is not None else r["cos_t"] for r in rows], float)
    f["maxsent"] = np.array([r["maxsent"] if r["maxsent"] is not None else r["cos_t"] for r in rows], float)
    q = query.lower()
    f["spk"] = np.array([bool(r["author"] and r["author"] in q) or bool(r["about"] and r["about"] in q)
                         for r in rows], float)
    f["len"] = np.log1p(np.array([r["characters"] for r in rows], float))
    # Neighbours either side in the same thread, when they are candidates (they are, unless filtered out).
    position = {(t, s): i for i, (t, s) in enumerate(zip(thread, seq))}
    before = np.array([position.get((t, s - 1), -1) for t, s in zip(thread, seq)])
    after = np.array([position.get((t, s + 1), -1) for t, s in zip(thread, seq)])
    for key in ("bm", "maxsent", "cos_t"):
        padded = np.append(f[key], f[key].min())
        f["nb_" + key] = np.maximum(padded[before], padded[after])
    # The best of each feature within the passage's thread.
    _, group = np.unique(thread, return_inverse=True)
    for key in ("bm", "cos_t", "maxsent"):
        best = np.full(group.max() + 1, BELOW_ANY_SCORE)
        np.maximum.at(best, group, f[key])
        f["sess_" + key] = best[group]
    f["datem"], f["dayM"] = _date_features(query, [r["at"] for r in rows])
    score = sum(weight * f[key] for key, weight in WEIGHTS.items())
    order = np.argsort(-score, kind="stable")[:limit]
    return [(int(ids[i]), float(score[i])) for i in order]
