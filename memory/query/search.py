"""memory_search: the brief, or a ranked list.

Without `after` or `scope` the answer is the brief: what is known (current dated facts, with since/until
and their source) and then whole passages; with either, a ranked list. `before` asks the question as of
that day: only what was said before it, facts as they stood then. Ranking is in retrieval.py.
"""

import re

from django.utils import timezone

from . import history, retrieval
from .. import llm
from .browse import passage_json
from ..extraction.attributes import ATTRIBUTES
from ..read.facts import subject_key
from ..limits import SEARCH_HITS
from ..selectors import Memory
from ..validation import parse_date


def ranked(memory: Memory, query: str, *, before=None, after=None, scope: str = "", current: bool = True,
           limit: int = SEARCH_HITS) -> list[tuple[float, object]]:
    """(score, passage) pairs, best first. Past-`expires` passages are left out unless `current` is off."""
    moment = (before or timezone.now()) if current else None
    filters = retrieval.Filters(before=before, after=after, scope=(scope or "").strip().lstrip("/"),
                                current_at=moment)
    scored = retrieval.rank(memory.end_user.pk, query, filters, limit)
    passages = memory.passages().in_bulk([pid for pid, _ in scored])
    return [(score, passages[pid]) for pid, score in scored]


KNOWN_MAX = 10
_WORDS = re.compile(r"[\w'-]+")


def known_facts(memory: Memory, query: str, passages: list, *, as_of=None) -> list[dict]:
    """The dated facts a brief leads with: those about subjects the question names, then those the top
    passages state, as they stood as of `as_of` (default now)."""
    words = {w.casefold() for w in _WORDS.findall(query)}
    names = {w for w in words if len(w) > 2}  # a word of its name names a subject; "is", "me" would name too many
    sources = {p.path for p in passages[:3]}
    facts = history.current_facts(memory, named=names, sources=sources, as_of=as_of, limit=200)
    stems = {w.rstrip("s") for w in words}
    # Facts whose attribute the question speaks of ("where does she live" -> home_city) come first.
    asked = {name for name, attribute in ATTRIBUTES.items()
             if stems & {w.rstrip("s") for w in _WORDS.findall(f"{name.replace('_', ' ')} {attribute.about}".casefold())
                         if len(w) > 3}}
    named = sorted((f for f in facts if names & set(subject_key(f["subject"]).split())),
                   key=lambda f: f["attribute"] not in asked)
    stated = [f for f in facts if f["source"] in sources and f not in named]
    return (named + stated)[:KNOWN_MAX]


def memory_search(*, memory: Memory, query: str, before: str | None = None, after: str | None = None,
                  scope: str | None = None) -> dict:
    """What memory holds for a question: the brief, or a ranked list with `after` or `scope`."""
    before_at = parse_date(before, "before") if before else None
    after_at = parse_date(after, "after") if after else None
    mode = "ranked" if (after or scope) else "brief"
    hits = ranked(memory, query, before=before_at, after=after_at, scope=scope or "")
    answer = {"query": query, "mode": mode}
    if before:
        answer["as_of"] = before
    if mode == "brief":
        answer["known"] = known_facts(memory, query, [p for _, p in hits], as_of=before_at)
    answer["found"] = len(hits)
    answer["hits"] = [passage_json(p, score=round(score, 6)) for score, p in hits]
    if mode == "brief" and hits:
        written = llm.brief_answer(query, answer["known"], answer["hits"])  # the one model call, if configured
        if written:
            answer["answer"] = written
    return answer
