"""What search scores each candidate on: one row of numbers per candidate, from the rows the features SQL
returns (Memory.candidate_features) and the question. retrieval.py weighs them with WEIGHTS; bench/tune.py
computes them once per question through the same code and fits the weights offline."""

import math
import re
from datetime import date

import numpy as np

from ..extraction.dates import MONTHS
from ..selectors import TermStatistics

K1, B = 0.9, 0.4  # BM25
# Below any similarity or scaled score (they lie in [-1, 1]): where a thread's best starts before its first.
BELOW_ANY_SCORE = -9.0
# A question's named day scores the passages of that day 1, and those a few days off less (a turn of the 8th
# tells what happened "yesterday"): exp(-days off / DAY_SCALE).
DAY_SCALE = 3.0
# Dates as people write them, whatever one conversation's habit: "8 May 2023", "the 8th of May, 2023",
# "May 8th, 2023", "Sept. 8" (any year), "2023-05-08"; a month ("in June", "June 2023") or a year alone.
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_DATE = re.compile(
    rf"\b(?:(?P<iy>\d{{4}})-(?P<im>\d{{1,2}})-(?P<id>\d{{1,2}})"
    rf"|(?:the )?(?P<d1>\d{{1,2}})(?:st|nd|rd|th)? (?:of )?(?P<m1>{_MONTH})\.?(?:,? (?P<y1>\d{{4}}))?"
    rf"|(?P<m2>{_MONTH})\.? (?:the )?(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,? (?P<y2>\d{{4}}))?"
    rf"|(?P<m3>{_MONTH})\b\.?(?:,? (?P<y3>\d{{4}}))?"
    rf"|(?P<y4>(?:19|20)\d\d))\b"
)
_IN_MAY = re.compile(r"\b(?:in|of|during|since|until|by|early|late|mid|last|next|this)[ -]$")


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
    "dayM",  # the question names the passage's day, or one a few days off
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
    f["spk"] = np.array(
        [bool(r["author"] and r["author"] in q) or bool(r["about"] and r["about"] in q) for r in rows], float
    )
    f["len"] = np.log1p(np.array([r["characters"] for r in rows], float))
    # Neighbours either side in the same thread, when they are candidates (they are, unless filtered out).
    position = {(t, s): i for i, (t, s) in enumerate(zip(thread, seq, strict=True))}
    before = np.array([position.get((t, s - 1), -1) for t, s in zip(thread, seq, strict=True)])
    after = np.array([position.get((t, s + 1), -1) for t, s in zip(thread, seq, strict=True)])
    for key in ("bm", "maxsent", "cos_t"):
        padded = np.append(f[key], f[key].min())
        f["nb_" + key] = np.maximum(padded[before], padded[after])
    # The best of each feature within the passage's thread.
    _, group = np.unique(thread, return_inverse=True)
    for key in ("bm", "cos_t", "maxsent"):
        best = np.full(group.max() + 1, BELOW_ANY_SCORE)
        np.maximum.at(best, group, f[key])
        f["sess_" + key] = best[group]
    f["datem"], f["dayM"] = date_features(query, [r["day"] for r in rows])
    return np.column_stack([f[name] for name in FEATURES])


def bm25(rows: list[dict], statistics: TermStatistics) -> np.ndarray:
    """BM25 of each candidate over the question's terms, with the memory's own document frequencies."""
    passages, average, df = statistics.passages, statistics.average_length, statistics.document_frequency
    tf = [r["tf"] for r in rows]
    weights = {
        t: math.log(1 + (passages - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in statistics.terms if df.get(t)
    }
    lengths = np.array([r["lexemes"] or 0 for r in rows], float)
    bm = np.zeros(len(rows))
    for term, idf in weights.items():
        freq = np.array([counts.get(term, 0) for counts in tf], float)
        # max(average, 1e-9): a memory of empty passages has average 0; never divide by it
        bm += idf * freq * (K1 + 1) / (freq + K1 * (1 - B + B * lengths / max(average, 1e-9)))
    return bm


def named_dates(question: str) -> tuple[set[tuple[int | None, int, int]], set[int], set[int]]:
    """The days ((year or None, month, day)), months and years a question names, however it writes them."""
    days: set[tuple[int | None, int, int]] = set()
    months: set[int] = set()
    years: set[int] = set()
    for m in _DATE.finditer(question.lower()):
        if m["iy"]:
            if 1 <= int(m["im"]) <= 12 and 1 <= int(m["id"]) <= 31:
                days.add((int(m["iy"]), int(m["im"]), int(m["id"])))
                months.add(int(m["im"]))
                years.add(int(m["iy"]))
        elif m["m1"] or m["m2"]:
            day, month, year = (m["d1"], m["m1"], m["y1"]) if m["m1"] else (m["d2"], m["m2"], m["y2"])
            if 1 <= int(day) <= 31:
                days.add((int(year) if year else None, MONTHS[month], int(day)))
            months.add(MONTHS[month])
            years |= {int(year)} if year else set()
        elif m["m3"]:
            if m["m3"] == "may" and not m["y3"] and not _IN_MAY.search(question.lower()[: m.start()]):
                continue  # "may" the verb
            months.add(MONTHS[m["m3"]])
            years |= {int(m["y3"])} if m["y3"] else set()
        else:
            years.add(int(m["y4"]))
    return days, months, years


def date_features(question: str, days: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per passage (its day, YYYY-MM-DD): is it from a month or year the question names (both, when it
    names both); how near is it to a day the question names (1 on it; a day named without its year, in any
    year)."""
    named, months, years = named_dates(question)
    month_or_year, near = np.zeros(len(days)), np.zeros(len(days))
    if not (named or months or years):
        return month_or_year, near
    at = [date.fromisoformat(day) for day in days]
    if months or years:
        month_or_year = np.array(
            [(not months or d.month in months) and (not years or d.year in years) for d in at], float
        )
    for year, month, day in named:
        for i, d in enumerate(at):
            try:
                wanted = d.replace(year=year or d.year, month=month, day=day)
            except ValueError:  # 31 June, 29 February of a common year
                continue
            near[i] = max(near[i], math.exp(-abs((d - wanted).days) / DAY_SCALE))
    return month_or_year, near
