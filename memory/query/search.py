"""memory_search: the brief, or a ranked list.

Without `after` or `scope` the answer is the brief: what is known (current dated facts, with since/until
and their source) and then whole passages; with either, a ranked list. `before` asks the question as of
that day: only what was said before it, facts as they stood then. Ranking is in retrieval.py.
"""

import re
from datetime import datetime
from typing import Any

from django.utils import timezone

from .. import llm
from ..extraction.attributes import ATTRIBUTES
from ..limits import SEARCH_HITS
from ..models import Passage
from ..paths import subject_key
from ..selectors import Memory, PassageFilters
from ..validation import GivenTime
from . import history, retrieval
from .browse import passage_json


def ranked(
    memory: Memory,
    query: str,
    *,
    before: datetime | None = None,
    after: datetime | None = None,
    scope: str = "",
    current: bool = True,
    limit: int = SEARCH_HITS,
) -> list[tuple[float, Passage]]:
    """(score, passage) pairs, best first. Past-`expires` passages are left out unless `current` is off."""
    scored = retrieval.rank(
        memory, query, passage_filters(before=before, after=after, scope=scope, current=current), limit
    )
    passages = memory.hits([pid for pid, _ in scored])
    return [(score, passages[pid]) for pid, score in scored if pid in passages]


def passage_filters(
    *, before: datetime | None = None, after: datetime | None = None, scope: str = "", current: bool = True
) -> PassageFilters:
    """What a search with these arguments may return (bench/tune.py asks through it too)."""
    moment = (before or timezone.now()) if current else None
    return PassageFilters(before=before, after=after, scope=(scope or "").strip().lstrip("/"), current_at=moment)


KNOWN_MAX = 10
SOURCES_READ = 3  # the top passages whose facts a brief also leads with
FACTS_WEIGHED = 200  # current facts weighed for a brief before the KNOWN_MAX best are kept
NAME_WORD_MIN = 3  # a word of its name names a subject; "is", "me" would name too many
ATTRIBUTE_WORD_MIN = 4  # a word that tells an attribute ("live", "city"); "the", "or" would tell them all
SCORE_DIGITS = 6  # a hit's score, rounded: enough to order by, without float noise in the answer
_WORDS = re.compile(r"[\w'-]+")
# The words that tell each attribute, from its name and what it is about (found once, not every brief)
ATTRIBUTE_WORDS = {
    name: {
        w.rstrip("s")
        for w in _WORDS.findall(f"{name.replace('_', ' ')} {attribute.about}".casefold())
        if len(w) >= ATTRIBUTE_WORD_MIN
    }
    for name, attribute in ATTRIBUTES.items()
}


def known_facts(memory: Memory, query: str, passages: list, *, as_of=None) -> list[dict]:
    """The dated facts a brief leads with: those about subjects the question names, then those the top
    passages state, as they stood as of `as_of` (default now)."""
    words = {w.casefold() for w in _WORDS.findall(query)}
    names = {w for w in words if len(w) >= NAME_WORD_MIN}
    sources = {p.path for p in passages[:SOURCES_READ]}
    facts = history.current_facts(memory, named=names, sources=sources, as_of=as_of, limit=FACTS_WEIGHED)
    stems = {w.rstrip("s") for w in words}
    # Facts whose attribute the question speaks of ("where does she live" -> home_city) come first.
    asked = {name for name, told_by in ATTRIBUTE_WORDS.items() if stems & told_by}
    named = sorted(
        (f for f in facts if names & set(subject_key(f["subject"]).split())), key=lambda f: f["attribute"] not in asked
    )
    stated = [f for f in facts if f["source"] in sources and f not in named]
    return (named + stated)[:KNOWN_MAX]


def memory_search(
    *,
    memory: Memory,
    query: str,
    before: GivenTime | None = None,
    after: datetime | None = None,
    scope: str | None = None,
) -> dict:
    """What memory holds for a question: the brief, or a ranked list with `after` or `scope`. With `before`,
    asked as of that day, which the answer names as the caller wrote it (`as_of`). An empty memory answers
    no_memory, asked only when nothing was found (a search that finds something spares the round trip)."""
    mode = "ranked" if (after or scope) else "brief"
    hits = ranked(memory, query, before=before, after=after, scope=scope or "")
    answer: dict[str, Any] = {"query": query, "mode": mode}
    if before:
        answer["as_of"] = before.text
    if mode == "brief":
        answer["known"] = known_facts(memory, query, [p for _, p in hits], as_of=before)
    if not hits and not answer.get("known"):
        memory.must_hold_items()
    answer["found"] = len(hits)
    answer["hits"] = [passage_json(p, score=round(score, SCORE_DIGITS)) for score, p in hits]
    if mode == "brief" and hits:
        written = llm.brief_answer(query, answer["known"], answer["hits"])  # the one model call, if configured
        if written:
            answer["answer"] = written
    return answer
