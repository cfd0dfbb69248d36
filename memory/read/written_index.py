"""index.md, the written index: what this memory holds, rewritten after each read."""

from django.db import IntegrityError, ProgrammingError, transaction
from django.db.models import Count, Max, Min

from accounts.models import EndUser

from ..markdown import inline
from ..models import WrittenIndex
from ..paths import PLURAL, subject_path
from ..selectors import Memory

THREADS_LISTED = 100  # threads (and subjects) listed: index.md stays a page a model reads whole
OPENING_WORDS = 12  # of a thread's first passage: enough to tell threads apart at a glance


def _day(value) -> str:
    return value.date().isoformat() if value else "?"


def _first_words(text: str, n: int = OPENING_WORDS) -> str:
    words = " ".join(text.split()).split(" ")
    return " ".join(words[:n]) + (" …" if len(words) > n else "")


def render_index(memory: Memory) -> str:
    """index.md: counts, places, the newest threads with their opening words, and the subjects. A few
    statements, whatever the memory holds: the read draws it again after each slice (bench/README.md "Adding")."""
    passages = memory.passages()
    totals = passages.aggregate(n=Count("id"), threads=Count("thread", distinct=True), first=Min("at"),
                                last=Max("at"))
    items = memory.items().count()
    lines = [
        f"# Memory of {inline(memory.end_user.external_id)}",
        "",
        f"{items} items in {totals['threads']} threads, "
        f"{totals['n']} passages, from {_day(totals['first'])} to {_day(totals['last'])}.",
        "",
        "## Places",
    ]
    places = passages.values("thread__source", "kind").annotate(n=Count("id"), threads=Count("thread", distinct=True))
    for place in places.order_by("thread__source", "kind"):
        lines.append(
            f"- passages/{place['thread__source']}/{PLURAL[place['kind']]}/: "
            f"{place['threads']} threads, {place['n']} passages"
        )
    lines += ["", f"## Threads, newest first (up to {THREADS_LISTED})"]
    for thread in memory.newest_threads(THREADS_LISTED):
        span = _day(thread.first) if _day(thread.first) == _day(thread.last) else (
            f"{_day(thread.first)} to {_day(thread.last)}"
        )
        name = f" \"{inline(thread.title)}\"" if thread.title else ""
        lines.append(
            f"- passages/{thread.source}/{PLURAL[thread.kind]}/{thread.tid}/{name}: {thread.n} passages, "
            f"{span}. {inline(_first_words(thread.opening or ''))}"
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
