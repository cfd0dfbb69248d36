"""index.md, the written index: what this memory holds, rewritten after each read."""

from typing import Any, cast

from django.db import IntegrityError, ProgrammingError, transaction
from django.db.models import Count, Max, Min, Sum

from accounts.models import EndUser

from ..markdown import inline
from ..models import Thread, WrittenIndex
from ..paths import PLURAL, subject_path
from ..selectors import Memory

THREADS_LISTED = 100  # threads (and subjects) listed: index.md stays a page a model reads whole
OPENING_WORDS = 12  # of a thread's first passage: enough to tell threads apart at a glance


def _opening(thread: Thread) -> str:
    """The thread's opening passage's text, as Memory.newest_threads annotates it (an annotation the types
    cannot see)."""
    return cast(str | None, cast(Any, thread).opening) or ""


def _day(value) -> str:
    return value.date().isoformat() if value else "?"


def _first_words(text: str, n: int = OPENING_WORDS) -> str:
    words = " ".join(text.split()).split(" ")
    return " ".join(words[:n]) + (" …" if len(words) > n else "")


def render_index(memory: Memory) -> str:
    """index.md: counts, places, the newest threads with their opening words, and the subjects. A few
    statements over the memory's threads (their counts kept by Memory.recount_threads), not its passages:
    the read draws it again after each slice (bench/README.md "Adding")."""
    threads = memory.held_threads()
    totals = threads.aggregate(n=Sum("passage_count"), threads=Count("id"), first=Min("first_at"), last=Max("last_at"))
    items = memory.items().count()
    lines = [
        f"# Memory of {inline(memory.end_user.external_id)}",
        "",
        f"{items} items in {totals['threads']} threads, "
        f"{totals['n'] or 0} passages, from {_day(totals['first'])} to {_day(totals['last'])}.",
        "",
        "## Places",
    ]
    places = threads.values("source", "kind").annotate(n=Sum("passage_count"), threads=Count("id"))
    for place in places.order_by("source", "kind"):
        lines.append(
            f"- passages/{place['source']}/{PLURAL[place['kind']]}/: {place['threads']} threads, {place['n']} passages"
        )
    lines += ["", f"## Threads, newest first (up to {THREADS_LISTED})"]
    for thread in memory.newest_threads(THREADS_LISTED):
        span = (
            _day(thread.first_at)
            if _day(thread.first_at) == _day(thread.last_at)
            else (f"{_day(thread.first_at)} to {_day(thread.last_at)}")
        )
        name = f' "{inline(thread.title)}"' if thread.title else ""
        lines.append(
            f"- passages/{thread.source}/{PLURAL[thread.kind]}/{thread.tid}/{name}: {thread.passage_count} passages, "
            f"{span}. {inline(_first_words(_opening(thread)))}"
        )
    people = sorted(memory.subjects().values())
    if people:
        lines += ["", "## Subjects"]
        lines += [f"- {subject_path(name)}: {inline(name)}" for name in people[:THREADS_LISTED]]
    return "\n".join(lines) + "\n"


def rewrite_index(memory: Memory) -> None:
    """Write index.md again; nothing when the end user was forgotten meanwhile (a read racing forget all)."""
    try:
        with transaction.atomic():
            WrittenIndex.objects.update_or_create(end_user=memory.end_user, defaults={"text": render_index(memory)})
    # The end user gone: the foreign key refuses the row, or row-level security first (its policy finds no
    # such end user in the scope: "new row violates row-level security policy", a ProgrammingError).
    except (IntegrityError, ProgrammingError):
        if EndUser.objects.filter(pk=memory.end_user.pk).exists():
            raise
