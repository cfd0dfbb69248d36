"""Selectors across end users: a project's read queue (in the project's scope, every end user of it), the
console's list of end users, and the beat's upkeep.

Row-level security shows no row outside a transaction's scope: a project's read queue reads in the project's
scope; the sweep, the backlog's size and the memories' sizes ask the SECURITY DEFINER functions
(memory/migrations/0008, 0013) that may look across projects, and learn ids and counts only. Reads of one end
user's memory go through its handle (memory/selectors.py, Memory).
"""

from datetime import timedelta

from django.db import connection
from django.db.models import Count, F, QuerySet
from django.utils import timezone

from .models import Item, Passage
from .selectors import named_rows


def unread_by_project(*, older_than: timedelta, limit: int) -> dict[int, int]:
    """project id -> how many of its items the read is behind on (never read, or edited since), among the
    oldest `limit` of all: the sweep's work. Only items not touched for `older_than`, so reads queued a
    moment ago are not queued twice."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT project_id FROM twin_unread_items(%s, %s)", [timezone.now() - older_than, limit])
        rows = named_rows(cursor)
    unread: dict[int, int] = {}
    for row in rows:
        unread[row["project_id"]] = unread.get(row["project_id"], 0) + 1
    return unread


def read_backlog(project_id: int) -> tuple[int, int]:
    """How much of a project's memory waits for the read: (items, characters of their text)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT items, characters FROM twin_read_backlog(%s)", [project_id])
        row = named_rows(cursor)[0]
    return row["items"], row["characters"]


def _waiting(leave_out: set[int]) -> QuerySet[Item]:
    """The scope's items the read will take: behind their version (as Memory.unread_items, so a turn never
    waits on an item the read skips), not failed at it, not among `leave_out`. An edit clears read_at, so
    `read_at IS NULL` holds for each of them and lets PostgreSQL use the unread items' partial indexes."""
    items = (
        Item.objects.filter(read_at__isnull=True)
        .exclude(read_version=F("version"))
        .exclude(failed_version=F("version"))
    )
    return items.exclude(pk__in=leave_out) if leave_out else items


def next_to_read(*, leave_out: set[int], items: int, characters: int) -> dict[int, list[int]]:
    """In a project's scope (`scoped(project_id)`, every end user of it): end user id -> pks of the
    project's oldest unread items, at most `items` of them and `characters` of text (always one), leaving
    out the pks `leave_out` (set aside for a retry) and failed items."""
    rows = _waiting(leave_out).order_by("updated_at", "pk").values("pk", "end_user_id", "characters")[:items]
    batch: dict[int, list[int]] = {}
    total = 0
    for row in rows:
        total += row["characters"]
        if batch and total > characters:
            break
        batch.setdefault(row["end_user_id"], []).append(row["pk"])
    return batch


def waiting_to_read(*, leave_out: set[int]) -> bool:
    """In a project's scope: whether any unread item (but those `leave_out` and failed ones) is left."""
    return _waiting(leave_out).exists()


def sizes_of_end_users(*, end_user_ids: list[int]) -> dict[int, dict[str, int]]:
    """In a project's scope: end user id -> how many items and passages their memory holds, for each of
    `end_user_ids` (0 and 0 for one with no memory yet): the console's list of end users."""
    # Two narrow counts, not one join of items x passages (which multiplies rows for a large memory).
    items = dict(
        Item.objects.filter(end_user_id__in=end_user_ids)
        .values("end_user_id")
        .annotate(n=Count("id"))
        .values_list("end_user_id", "n")
    )
    passages = dict(
        Passage.objects.filter(end_user_id__in=end_user_ids)
        .values("end_user_id")
        .annotate(n=Count("id"))
        .values_list("end_user_id", "n")
    )
    return {pk: {"items": items.get(pk, 0), "passages": passages.get(pk, 0)} for pk in end_user_ids}


def end_users_with_passages(*, at_least: int, among: set[int] | None = None) -> list[int]:
    """Ids of the end users (of those `among`, when given) whose memory holds at least `at_least`
    passages, in order; an erased end user's statistics go with them."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT end_user_id FROM twin_memory_sizes(%s) ORDER BY end_user_id", [at_least])
        found = [row["end_user_id"] for row in named_rows(cursor)]
    return [end_user for end_user in found if among is None or end_user in among]


def read_backlogs() -> list[dict]:
    """Every project's read backlog: [{project_id, items, characters, oldest}], the most items first."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT project_id, items, characters, oldest FROM twin_read_backlogs() ORDER BY items DESC")
        return named_rows(cursor)
