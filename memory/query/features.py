"""What search scores each candidate on: one row of numbers per candidate, from the rows the features SQL
returns (Memory.candidate_features) and the question. retrieval.py weighs them with WEIGHTS; bench/tune.py
computes them once per question through the same code and fits the weights offline."""

import math
import re
from datetime import datetime

import numpy as np

from ..selectors import TermStatistics

K1, B = 0.9, 0.4  # BM25
# Below any similarity or scaled score (they lie in [-1, 1]): where a thread's best starts before its first.
BELOW_ANY_SCORE = -9.0
MONTHS = "january february march april may june july august september october november december".split()
_MONTH = "|".join(MONTHS)
_DAY = re.compile(rf"(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH}),?\s+(\d{{4}})|({_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})")
_YEAR = re.compile(r"\b((?:19|20)\d\d)\b")

# The columns of the matrix, in order (memory/query/weights.json weighs each).
FEATURES = (
    "bm",  # BM25 over the question's words, scaled by the best candidate's
    "cos_t",  # the passage's vector
    "cos_prev",  # the passage read with the one before it
    "cos_next",  # the next passage read with this one: a question often matches a turn and its answer
    "maxsent",  # the passage's best sentence
    "spk",  # the question names the passage's author (or what it is about)
    "nb_bm",  # the best of its neighbours' BM25
    "nb_maxsent",
    "nb_cos_t",
    "sess_bm",  # the best BM25 in its thread: the right conversation, then the right turn
    "sess_cos_t",
    "sess_maxsent",
    "len",  # log characters: longer turns say more
    "datem",  # the question names the month or year the passage is from
    "dayM",  # the question names the passage's day
)


def matrix(rows: list[dict], statistics: TermStatistics, query: str) -> np.ndarray:
    """(candidates, FEATURES) for the rows of Memory.candidate_features, in their order."""
    thread = np.array([r["thread_id"] for r in rows])
    seq = np.array([r["seq"] for r in rows])
    f = {}
    bm = bm25(rows, statistics)
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
    f["datem"], f["dayM"] = date_features(query, [r["at"] for r in rows])
    return np.column_stack([f[name] for name in FEATURES])


def bm25(rows: list[dict], statistics: TermStatistics) -> np.ndarray:
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


def date_features(question: str, days: list[datetime]) -> tuple[np.ndarray, np.ndarray]:
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
