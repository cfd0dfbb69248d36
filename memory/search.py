"""memory_search: hybrid retrieval over passages, fused by reciprocal rank.

Candidates come from pgvector (cosine over passage embeddings) and Postgres full text (any of the query's
words), each within the one end user's memory, then fused. Without `after` or `scope` the answer is the
brief; with either, a ranked list. `before` asks the question as of that day.
"""

from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db.models import F, Q
from django.utils import timezone
from pgvector.django import CosineDistance

from . import embeddings
from .browse import passage_json
from .limits import SEARCH_HITS
from .selectors import Memory
from .validation import parse_date

CANDIDATES = 50
RRF_K = 60


def _filtered(memory: Memory, *, before, after, scope, current: bool):
    passages = memory.passages()
    if before:
        passages = passages.filter(at__lt=before)
    if after:
        passages = passages.filter(at__gte=after)
    if scope:
        passages = passages.filter(path__startswith=scope.strip().lstrip("/"))
    if current:
        now = before or timezone.now()
        passages = passages.filter(Q(expires__isnull=True) | Q(expires__gt=now))
    return passages


def _or_query(query: str) -> SearchQuery | None:
    words = [w for w in "".join(c if c.isalnum() else " " for c in query).split() if len(w) > 1]
    if not words:
        return None
    return SearchQuery(" OR ".join(words), search_type="websearch", config="english")


def ranked(memory: Memory, query: str, *, before=None, after=None, scope: str = "", current: bool = True,
           limit: int = SEARCH_HITS) -> list[tuple[float, object]]:
    """(score, passage) pairs, best first."""
    passages = _filtered(memory, before=before, after=after, scope=scope, current=current)
    vector = embeddings.embed_one(query)
    by_vector = list(passages.annotate(distance=CosineDistance("embedding", vector)).order_by("distance")[:CANDIDATES])
    scores: dict[int, float] = {}
    found = {p.pk: p for p in by_vector}
    for rank, p in enumerate(by_vector):
        scores[p.pk] = scores.get(p.pk, 0) + 1 / (RRF_K + rank + 1)
    text_query = _or_query(query)
    if text_query is not None:
        by_text = list(
            passages.filter(search=text_query).annotate(rank=SearchRank(F("search"), text_query))
            .order_by("-rank")[:CANDIDATES]
        )
        for rank, p in enumerate(by_text):
            found.setdefault(p.pk, p)
            scores[p.pk] = scores.get(p.pk, 0) + 1 / (RRF_K + rank + 1)
    best = sorted(scores, key=lambda pk: (-scores[pk], pk))[:limit]
    return [(scores[pk], found[pk]) for pk in best]


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
    answer["found"] = len(hits)
    answer["hits"] = [passage_json(p, score=round(score, 6)) for score, p in hits]
    return answer


def memory_history(*, memory: Memory, subject: str, attribute: str | None = None) -> dict:
    """The bi-temporal chain for one subject (facts arrive with the extractor)."""
    from .errors import CannotAnswer

    raise CannotAnswer("no_subject", f"No facts are recorded about {subject!r} yet.", subject=subject,
                       nearest=[])
