"""What a forget erases, so that nothing that came only from the forgotten items remains.

With the items go, by cascade, their versions, passages, sentence vectors and full text. Besides those:
the facts they were the source of (subject names included; a value they corrected stands again), the term
statistics only their passages held, the titles they gave threads (recomputed from what remains; a thread
left empty goes, with the session or id that keyed it), and Usage's last errors that quote their ids. The
written index is rewritten by the caller after the commit. What a forget cannot reach (dead tuples until
vacuum, the WAL, backups) is in the README ("Duplicates, secrets and forgetting").
"""

from django.db.models import Count

from . import usage
from .read import stats
from .read.facts import forget_facts
from .read.pipeline import thread_title
from .selectors import Memory


def erase_items(memory: Memory, external_ids: list[str]) -> dict:
    """Erase the memory's items of `external_ids` (their rows already locked) and all that came only from
    them; returns the counts of what was erased: items, versions, passages, facts."""
    items = memory.items().filter(external_id__in=external_ids)
    passages = memory.passages().filter(item__in=items)
    counts = {"items": len(external_ids), "versions": _versions(items), "passages": passages.count()}
    threads = list(passages.values_list("thread_id", flat=True).distinct())
    counts["facts"] = forget_facts(memory, items)
    stats.uncount_passages(memory, list(passages.values_list("pk", flat=True)))
    items.only("pk").delete()  # by key alone: a row stored with a date that cannot be read back is erased too
    _retitle(memory, threads)
    memory.recount_threads(threads)
    usage.forget_errors_naming(project_id=memory.end_user.project_id, ids=external_ids)
    return counts


def erase_end_user(memory: Memory, external_ids: list[str]) -> dict:
    """Erase the whole end user (every item, `external_ids`, already locked) and all of their memory;
    returns the counts of what was erased."""
    counts = {
        "items": len(external_ids),
        "versions": _versions(memory.items()),
        "passages": memory.passages().count(),
        "facts": memory.facts().count(),
    }
    usage.forget_errors_naming(project_id=memory.end_user.project_id, ids=external_ids)
    memory.end_user.delete()
    return counts


def _versions(items) -> int:
    return items.aggregate(n=Count("versions"))["n"]


def _retitle(memory: Memory, thread_pks: list[int]) -> None:
    """Threads that lost passages: titled again from their first remaining passage's item, or deleted
    when none remains (the read makes a thread again for an item that needs it)."""
    for thread in memory.threads().filter(pk__in=thread_pks):
        first = memory.passages().filter(thread=thread).order_by("seq").values_list("item_id", flat=True).first()
        if first is None:
            thread.delete()
            continue
        title = thread_title(memory.items().get(pk=first), thread.key)
        if title != thread.title:
            thread.title = title
            thread.save(update_fields=["title"])
