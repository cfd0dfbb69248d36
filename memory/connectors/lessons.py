"""memory_lessons: what past attempts at a task like this one taught.

Attempts are items whose metadata carries an outcome, or whose text reports what was tried, what failed,
what worked, a root cause or a lesson. Those like the task (by the passages' vectors) are grouped by task:
a written account by its thread (an incident and its postmortem), a bare outcome by its action and surface
(every deploy of acme/web). Each group is one lesson, answered with the passages behind it.
"""

import re
from collections import Counter

import numpy as np
from django.db.models import Q

from memory.model import embeddings

from ..errors import CannotAnswer
from ..selectors import Memory
from .events import as_event, cite, passages_of

WRITTEN = {"message", "comment", "postmortem", "note", "document", "review", "reply", "retro"}
CANDIDATES_MAX = 2_000
LESSONS_MAX = 5
PASSAGES_MAX = 5
RELEVANT_MIN = 0.25  # cosine to the task below which an attempt is about something else
RELEVANT_SPREAD = 0.2  # and at most this far below the best one
ACCOUNT_BONUS = 0.1  # a written lesson says more than a bare outcome of the same relevance

# PostgreSQL word bounds (\m \M): the words that mark a written account of an attempt.
ACCOUNT_SQL = (
    r"\m(tried|try|failed|worked|lessons?|next time|root cause|we now|from now on|postmortem|"
    r"post-mortem|learned|learnt|rolled back|reverted)\M"
)
_ACCOUNT = re.compile(ACCOUNT_SQL.replace(r"\m", r"\b").replace(r"\M", r"\b"), re.I)
_TAKEAWAY = re.compile(
    r"\b(lessons?|next time|we now|from now on|never again|should have|learn(?:ed|t)|"
    r"always|going forward)\b",
    re.I,
)
_CAUSE = re.compile(r"\broot cause\b", re.I)
_RESULT = re.compile(r"\b(worked|work|succeeded|failed|broke|reverted|rolled back)\b", re.I)
_TRIED = re.compile(r"\b(tried|try)\b", re.I)
_FAILED = re.compile(r"\b(failed|broke|caused|incident|rolled back|reverted|outage|locked)\b", re.I)
_WORKED = re.compile(r"\b(worked|succeeded|success|no error)\b", re.I)
_GREETING = re.compile(r"^(hi|hey|hello|good morning|morning|heads up)\b[^,:.]{0,20}[,:]\s*", re.I)
_SENTENCES = re.compile(r"(?<=[.!?])\s+")


def _is_account(event) -> bool:
    """A written account of an attempt: someone's words (not a tool's event) saying what was tried."""
    return event.action in WRITTEN and bool(_ACCOUNT.search(event.text))


def _similarity(memory: Memory, task: str, passages: list) -> np.ndarray:
    """Each passage's cosine to the task: the best of the whole passage and its sentences, so one line of
    a long postmortem can match a short task."""
    query = embeddings.embed_one(task)
    best = np.array([np.asarray(p.embedding, dtype=np.float32) @ query for p in passages])
    where = {p.pk: i for i, p in enumerate(passages)}
    rows = memory.passages().filter(pk__in=list(where), sentences__isnull=False)
    for pk, vector in rows.values_list("pk", "sentences__embedding"):
        best[where[pk]] = max(best[where[pk]], float(np.asarray(vector, dtype=np.float32) @ query))
    return best


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.split(text) if s.strip()]


def _best(text: str, pattern) -> str:
    return next((s for s in _sentences(text) if pattern.search(s)), "")


def _outcome(events: list) -> str:
    """success, failure or mixed from the outcomes recorded (else read from the text); free text as given."""
    said = [e.outcome.casefold() for e in events if e.outcome]
    if not said:
        text = " ".join(e.text for e in events)
        said = ["failure"] if _FAILED.search(text) else ["success"] if _WORKED.search(text) else []
    counts = Counter(said)
    if not counts:
        return "unknown"
    if len(counts) == 1:
        return next(iter(counts))
    return "mixed" if {"success", "failure"} <= set(counts) else counts.most_common(1)[0][0]


def _written_lesson(events: list) -> tuple[str, str]:
    """(the takeaway, what happened) from a group's written accounts, most telling sentence first."""
    texts = [e.text for e in events]
    takeaway = next((s for t in texts if (s := _best(t, _TAKEAWAY))), "")
    happened = next((s for t in texts for p in (_CAUSE, _RESULT, _TRIED) if (s := _best(t, p))), "")
    takeaway = re.sub(r"^(lessons?( learned| learnt)?|takeaway)\s*:\s*", "", takeaway, flags=re.I)
    takeaway, happened = (_GREETING.sub("", s) for s in (takeaway, happened))
    return (takeaway or happened), (happened if happened and happened != takeaway else "")


def _tally_lesson(events: list) -> str:
    """A lesson from bare outcomes: how often this action on this surface went which way."""
    first = events[0]
    counts = Counter((e.outcome or "unknown").casefold() for e in events)
    parts = ", ".join(f"{n} {label}" for label, n in counts.most_common())
    where = f" on {first.surface}" if first.surface else ""
    failed = [e.at.date().isoformat() for e in events if e.outcome.casefold() == "failure"]
    tail = f"; failed on {', '.join(failed[-3:])}" if failed else ""
    return f"{first.action}{where}: {len(events)} attempt{'s' * (len(events) > 1)} ({parts}){tail}."


def memory_lessons(*, memory: Memory, task: str) -> dict:
    """The lessons of past attempts like `task`: each with its outcome, how many attempts it rests on, and
    the passages behind it. CannotAnswer when memory records no attempt like it."""
    memory.must_hold_items()
    rows = (
        memory.items()
        .filter(Q(metadata__has_key="outcome") | Q(text__iregex=ACCOUNT_SQL))
        .order_by("-at", "-pk")
        .values_list("pk", "external_id", "at", "author", "kind", "session", "text", "metadata")
    )
    attempts = [as_event(*row) for row in rows[:CANDIDATES_MAX]]
    passages = passages_of(memory, [e.pk for e in attempts])
    attempts = [e for e in attempts if e.pk in passages and passages[e.pk].embedding is not None]
    if not attempts:
        raise CannotAnswer("no_attempts", "Memory records no attempt with an outcome or a lesson.", task=task)
    similarity = _similarity(memory, task, [passages[e.pk] for e in attempts])
    best = float(similarity.max())
    keep = [
        (float(s), e)
        for s, e in zip(similarity, attempts, strict=True)
        if s >= RELEVANT_MIN and s >= best - RELEVANT_SPREAD
    ]
    if not keep:
        raise CannotAnswer(
            "no_lessons",
            "Memory records no attempt at a task like this one.",
            task=task,
            closest=cite(passages[attempts[int(similarity.argmax())].pk]),
        )
    groups = _grouped(keep, list(zip(similarity, attempts, strict=True)))
    lessons = [_lesson(key, members, passages) for key, members in groups.items()]
    lessons.sort(key=lambda entry: -entry["relevance"])
    return {"task": task, "lessons": lessons[:LESSONS_MAX]}


def _grouped(keep: list, scored: list) -> dict[tuple, list]:
    """The kept attempts grouped into lessons: a written account's thread, or a tally of one action on one
    surface, each member with its score. A written account's thread brings its other attempts along (the
    incident's rollback), relevant or not."""
    groups: dict[tuple, list] = {}
    for score, e in keep:
        written = _is_account(e)
        key = ("thread", e.thread or e.item_id) if written else ("tally", e.action, e.surface)
        groups.setdefault(key, []).append((score + (ACCOUNT_BONUS if written else 0.0), e))
    kept = {e.pk for _, e in keep}
    for key in [k for k in groups if k[0] == "tally"]:
        groups[key] = [(s, e) for s, e in groups[key] if ("thread", e.thread) not in groups]
        if not groups[key]:
            del groups[key]
    for score, e in scored:
        if ("thread", e.thread) in groups and (e.pk not in kept or not _is_account(e)):
            groups[("thread", e.thread)].append((float(score), e))
    return groups


def _lesson(key: tuple, members: list, passages: dict) -> dict:
    """One lesson from a group's members (score, attempt): what it taught, its outcome, its passages."""
    members.sort(key=lambda se: (-se[0], se[1].at))
    group = [e for _, e in members]
    if key[0] == "thread":
        lesson, happened = _written_lesson(sorted(group, key=lambda e: -bool(_TAKEAWAY.search(e.text))))
    else:
        lesson, happened = _tally_lesson(sorted(group, key=lambda e: e.at)), ""
    # A thread's outcome is its account's (a postmortem's failure), not its rollback's success.
    accounts = [e for e in group if _is_account(e)] if key[0] == "thread" else group
    entry = {
        "lesson": lesson,
        "outcome": _outcome(accounts or group),
        "attempts": max(sum(bool(e.outcome) for e in group), 1),
        "relevance": round(members[0][0], 3),
    }
    if happened:
        entry["what_happened"] = happened
    entry["passages"] = [cite(passages[e.pk]) for e in group[:PASSAGES_MAX]]
    return entry
