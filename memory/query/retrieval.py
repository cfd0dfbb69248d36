"""Hybrid retrieval for memory_search: candidates from PostgreSQL, one linear score in Python.

Candidates, all within one end user's memory and its date/scope filters: the CANDIDATES nearest passages
by vector (pgvector HNSW with iterative scans, a big memory's own indexes from read/own_indexes.py, or an exact
scan when the memory is small), the CANDIDATES best full-text matches on the question's rarer words
(matching_terms), and every one's neighbour either side in its thread. (A third source, the passages of
the nearest sentences, found nothing the others missed on LoCoMo and cost a second HNSW index; sentences
still score a candidate as `maxsent`.) Each candidate then gets the features that help on conversation
memory and the weighted sum below decides the order. Latency at 1M passages is in bench/README.md "Search
latency" (bench/search_latency.py); the recipe and what each feature bought on LoCoMo are in
bench/README.md (bench/locomo.py).
"""

import math
from concurrent.futures import ThreadPoolExecutor
import re
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.db import connection
from pgvector import Vector

from .. import embeddings
from ..read import stats

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
MONTHS = "january february march april may june july august september october november december".split()
_MONTH = "|".join(MONTHS)
_DAY = re.compile(rf"(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH}),?\s+(\d{{4}})|({_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})")


@dataclass(frozen=True)
class Filters:
    before: datetime | None = None
    after: datetime | None = None
    scope: str = ""
    current_at: datetime | None = None  # leave out what had expired by then

    def sql(self, alias: str) -> tuple[str, dict]:
        parts, params = [f"{alias}.end_user_id = %(end_user)s"], {}
        if self.before:
            parts.append(f"{alias}.at < %(before)s")
            params["before"] = self.before
        if self.after:
            parts.append(f"{alias}.at >= %(after)s")
            params["after"] = self.after
        if self.scope:
            # starts_with, not LIKE: it is LEAKPROOF, so row-level security leaves it to the path index
            parts.append(f"{alias}.path ^@ %(scope)s")
            params["scope"] = self.scope
        if self.current_at:
            parts.append(f"({alias}.expires IS NULL OR {alias}.expires > %(current_at)s)")
            params["current_at"] = self.current_at
        return " AND ".join(parts), params


def _tsquery(terms: list[str]) -> str:
    """An OR of already-normalised lexemes, as tsquery input (quoted, so nothing is parsed again)."""
    return " | ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms)


_BY_TEXT = """
SELECT p.id FROM memory_passage p WHERE {p} AND p.search @@ %(tsq)s::tsquery
ORDER BY ts_rank(p.search, %(tsq)s::tsquery) DESC LIMIT {n}
"""

_BY_VECTOR = """
SELECT p.id FROM memory_passage p WHERE {p} ORDER BY p.embedding <=> %(q)s::halfvec LIMIT {n}
"""

# Every candidate (the two sources' ids and each one's neighbour either side in its thread) with what it is
# scored on, in one round trip.
_FEATURES = """
WITH base AS (
    SELECT DISTINCT unnest(%(ids)s::bigint[]) AS id
), candidates AS (
    SELECT id FROM base
    UNION
    -- OFFSET 0 keeps the neighbours a subquery of their own, so b's seq comes in as a parameter: in a join,
    -- `n.seq = b.seq - 1` is not LEAKPROOF (the minus can overflow) and row-level security would keep it
    -- out of the (thread, seq) index (35 candidates' neighbours: 1,100 ms -> 0.5 ms in a 20,000 passage thread)
    SELECT beside.id FROM base JOIN memory_passage b ON b.id = base.id
    CROSS JOIN LATERAL (
        SELECT n.id FROM memory_passage n
        WHERE n.thread_id = b.thread_id AND n.seq IN (b.seq - 1, b.seq + 1) AND {n_filter} OFFSET 0
    ) beside
)
SELECT p.id, p.thread_id, p.seq, p.at, lower(p.author), lower(p.about), length(p.text), length(p.search),
    1 - (p.embedding <=> %(q)s::halfvec),
    1 - (coalesce(p.context_embedding, p.embedding) <=> %(q)s::halfvec),
    (SELECT 1 - (n.context_embedding <=> %(q)s::halfvec) FROM memory_passage n
     WHERE n.thread_id = p.thread_id AND n.seq = p.seq + 1 AND {n_filter}),
    (SELECT max(1 - (s.embedding <=> %(q)s::halfvec)) FROM memory_passagesentence s WHERE s.passage_id = p.id),
    tf.terms, tf.counts
FROM memory_passage p
-- the question's terms in the passage and how often each occurs (BM25), in one pass over its lexemes
LEFT JOIN LATERAL (
    SELECT array_agg(u.lexeme) AS terms, array_agg(coalesce(array_length(u.positions, 1), 1)) AS counts
    FROM unnest(p.search) u WHERE u.lexeme = ANY(%(terms)s)
) tf ON true
WHERE p.id IN (SELECT id FROM candidates)
"""


def query_terms(query: str) -> list[str]:
    """The question's words normalised as the passages' full text is (English stemming, stop words out)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT tsvector_to_array(to_tsvector('english', %s))", [query])
        return list(cursor.fetchone()[0] or [])


def _date_features(question: str, days: list[datetime]) -> tuple[np.ndarray, np.ndarray]:
    q = question.lower()
    months = {MONTHS.index(m) + 1 for m in MONTHS if m in q}
    years = {int(y) for y in re.findall(r"\b((?:19|20)\d\d)\b", q)}
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


def rank(end_user_id: int, query: str, filters: Filters, limit: int) -> list[tuple[int, float]]:
    """(passage id, score) for the best `limit` passages, best first."""
    # The model embeds the question (releasing the GIL) while the database finds the text matches.
    vector = _embedder.submit(embeddings.embed_one, query)
    terms, passages, average, df = stats.for_query(end_user_id, query)
    matching = matching_terms(terms, df)
    where, params = filters.sql("p")
    n_filter, _ = filters.sql("n")
    params["end_user"] = end_user_id
    with connection.cursor() as cursor:
        ids = []
        if matching:
            cursor.execute(_BY_TEXT.format(p=where, n=CANDIDATES), {**params, "tsq": _tsquery(matching)})
            ids = [row[0] for row in cursor.fetchall()]
        params["q"] = Vector(vector.result().tolist()).to_text()
        cursor.execute(_BY_VECTOR.format(p=where, n=CANDIDATES), params)
        ids += [row[0] for row in cursor.fetchall()]
        if not ids:
            return []
        cursor.execute(_FEATURES.format(n_filter=n_filter), {**params, "ids": ids, "terms": terms})
        rows = cursor.fetchall()
    tf = {row[0]: dict(zip(row[12], row[13])) for row in rows if row[12]}
    return _score(rows, tf, terms, (passages, average, df), query, limit)


def explain(end_user_id: int, query: str, filters: Filters) -> dict[str, str]:
    """How the database finds a question's candidates: EXPLAIN ANALYZE of each source, by name."""
    terms, _, _, df = stats.for_query(end_user_id, query)
    matching = matching_terms(terms, df)
    where, params = filters.sql("p")
    params.update(end_user=end_user_id, tsq=_tsquery(matching),
                  q=Vector(embeddings.embed_one(query).tolist()).to_text())
    sources = {"text": _BY_TEXT} if matching else {}  # as in rank: no words to match, no text source
    plans = {}
    with connection.cursor() as cursor:
        for source, sql in {**sources, "vector": _BY_VECTOR}.items():
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql.format(p=where, n=CANDIDATES), params)
            plans[source] = "\n".join(row[0] for row in cursor.fetchall())
    return plans


def _score(rows, tf, terms, corpus, query: str, limit: int) -> list[tuple[int, float]]:
    ids = np.array([r[0] for r in rows])
    thread = np.array([r[1] for r in rows])
    seq = np.array([r[2] for r in rows])
    f = {}
    # BM25 with the end user's own document frequencies.
    passages, average, df = corpus
    weights = {t: math.log(1 + (passages - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in terms if df.get(t)}
    lengths = np.array([r[7] or 0 for r in rows], float)
    bm = np.zeros(len(rows))
    for term, idf in weights.items():
        freq = np.array([tf.get(pid, {}).get(term, 0) for pid in ids], float)
        bm += idf * freq * (K1 + 1) / (freq + K1 * (1 - B + B * lengths / max(average, 1e-9)))
    f["bm"] = bm / bm.max() if bm.max() > 0 else bm
    f["cos_t"] = np.array([r[8] for r in rows], float)
    f["cos_prev"] = np.array([r[9] for r in rows], float)
    f["cos_next"] = np.array([r[10] if r[10] is not None else r[8] for r in rows], float)
    f["maxsent"] = np.array([r[11] if r[11] is not None else r[8] for r in rows], float)
    q = query.lower()
    f["spk"] = np.array([bool(r[4] and r[4] in q) or bool(r[5] and r[5] in q) for r in rows], float)
    f["len"] = np.log1p(np.array([r[6] for r in rows], float))
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
        best = np.full(group.max() + 1, -9.0)
        np.maximum.at(best, group, f[key])
        f["sess_" + key] = best[group]
    f["datem"], f["dayM"] = _date_features(query, [r[3] for r in rows])
    score = sum(weight * f[key] for key, weight in WEIGHTS.items())
    order = np.argsort(-score, kind="stable")[:limit]
    return [(int(ids[i]), float(score[i])) for i in order]
