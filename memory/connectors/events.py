"""Connector-shaped items read as events: who did what, where, when, with what outcome.

The conventions (README "Connector data"): `metadata.source` (slack, github, pagerduty…), `metadata.surface`
(a channel or repository), `metadata.action` (message, review, merge, deploy, incident_open…),
`metadata.outcome` (success, failure or free text), `metadata.thread` (the conversation or PR); the item's
`author` is the person, `at` the time, `session` may group a thread. A plain item still reads as an event:
its action is its kind, its surface its session.
"""

import difflib
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count

from ..errors import CannotAnswer, echoed
from ..models import Passage
from ..paths import iso
from ..selectors import Memory

EVENTS_MAX = 20_000  # the newest this many; a person's habits show well before that
CHAT = "message"  # talk rather than a step: runs of it count once
NEAREST_PEOPLE = 5  # offered when a person is not found
# difflib's ratio a spelling must reach to be offered: looser than its default (0.6) and the subjects' (0.5),
# since a person is often named short or misspelt ("jon" for "Jonathan Reyes").
PERSON_SIMILARITY = 0.4


@dataclass(frozen=True)
class Event:
    pk: int
    item_id: str
    at: datetime
    author: str
    action: str
    surface: str
    source: str
    outcome: str
    thread: str
    text: str


def _text(value) -> str:
    return str(value).strip() if isinstance(value, (str, int, float)) and value is not None else ""


def as_event(pk, external_id, at, author, kind, session, text, metadata) -> Event:
    """One item's row as an Event, reading the metadata conventions (a plain item: kind and session)."""
    meta = metadata if isinstance(metadata, dict) else {}
    action = _text(meta.get("action")).casefold() or kind
    return Event(
        pk=pk,
        item_id=external_id,
        at=at,
        author=author or "",
        action=action,
        surface=_text(meta.get("surface")) or session or "",
        source=_text(meta.get("source")),
        outcome=_text(meta.get("outcome")),
        thread=_text(meta.get("thread")) or session or "",
        text=text,
    )


def events(memory: Memory, *, author: str | None = None, before: datetime | None = None, queryset=None) -> list[Event]:
    """The memory's items as events, oldest first (the newest EVENTS_MAX), optionally one author's."""
    rows = queryset if queryset is not None else memory.items()
    if author is not None:
        rows = rows.filter(author=author)
    if before is not None:
        rows = rows.filter(at__lt=before)
    fields = ("pk", "external_id", "at", "author", "kind", "session", "text", "metadata")
    newest = list(rows.order_by("-at", "-pk").values_list(*fields)[:EVENTS_MAX])
    return [as_event(*row) for row in reversed(newest)]


def steps(sequence: list[Event]) -> list[Event]:
    """The events as steps: a run of chat counts once, so talk between steps does not drown them."""
    out: list[Event] = []
    for event in sequence:
        if out and event.action == CHAT and out[-1].action == CHAT:
            continue
        out.append(event)
    return out


def authors(memory: Memory) -> dict[str, int]:
    """Every author and how many items they wrote, most active first."""
    rows = memory.items().exclude(author="").values("author").annotate(n=Count("id")).order_by("-n", "author")
    return {r["author"]: r["n"] for r in rows}


def nearest_people(known: list[str], who: str, n: int = NEAREST_PEOPLE) -> list[str]:
    """Known people whose name is close to `who`: shared name parts first, then by spelling."""
    key = who.casefold().strip()
    parts = set(key.replace(".", " ").replace("@", " ").split())
    sharing = [name for name in known if parts & set(name.casefold().split())]
    spelled = difflib.get_close_matches(key, [k.casefold() for k in known], n=n, cutoff=PERSON_SIMILARITY)
    by_key = {k.casefold(): k for k in known}
    return list(dict.fromkeys([*sharing, *(by_key[s] for s in spelled)]))[:n]


def resolve_person(memory: Memory, who: str) -> str:
    """The author `who` names: exactly (ignoring case), by a unique first or last name, or by a unique
    prefix; otherwise CannotAnswer with the nearest known people."""
    known = list(authors(memory))
    key = who.casefold().strip()
    exact = [name for name in known if name.casefold() == key]
    if exact:
        return exact[0]
    partial = [name for name in known if key in name.casefold().split()]
    if len(partial) != 1:
        partial = [name for name in known if name.casefold().startswith(key)] if key else []
    if len(partial) == 1:
        return partial[0]
    raise CannotAnswer(
        "unknown_person",
        f"Nothing in this memory was written by {echoed(who)}.",
        who=who,
        nearest=nearest_people(known, who) or known[:NEAREST_PEOPLE],
    )


def owner(memory: Memory) -> str:
    """The memory's owner as an author: the end user's id when someone writes under it, else the most
    active author writing as the user, else the most active author."""
    known = authors(memory)
    if not known:
        raise CannotAnswer("no_people", "No item in this memory names its author.")
    try:
        return resolve_person(memory, memory.end_user.external_id)
    except CannotAnswer:
        pass
    as_user = memory.items().filter(role="user").exclude(author="").values_list("author", flat=True)
    users = [name for name in known if name in set(as_user)]
    return (users or list(known))[0]


def passages_of(memory: Memory, item_pks) -> dict[int, Passage]:
    """item pk -> its first passage (the address an answer cites)."""
    found: dict[int, Passage] = {}
    for p in memory.passages().filter(item_id__in=list(item_pks)).order_by("item_id", "seq"):
        found.setdefault(p.item_id, p)
    return found


def cite(passage, text: str | None = None) -> dict:
    """A passage as a lesson, record or run-up cites it: path, passage_id, at, text."""
    return {
        "path": passage.path,
        "passage_id": passage.passage_id,
        "at": iso(passage.at),
        "text": text if text is not None else passage.text,
    }
