"""Items whose read raises: why, in one line, and marking them failed once their retries are spent.

One unreadable item (a row from before dates were bounded, whose date psycopg cannot read back) must
neither hold up the rest of its batch nor be read again forever. The read sets it aside with a reason; the
task reads it again READ_RETRIES times with backoff, then marks its version failed: memory_overview counts
it (counts.failed_items), the sweep leaves it, and an edit, being a new version, tries again.

A reason names the exception's class and the field or step that raised, never the item's text or the
exception's message, which may quote it.
"""

import traceback

from django.db import DataError, InterfaceError, OperationalError, transaction
from django.db.models import F
from django.utils import timezone

from ..selectors import Memory

# The database being away or busy (a lock timeout, a lost connection) is no fault of the item: the whole
# task is retried by Celery, and no item is marked failed for it.
TRANSIENT = (OperationalError, InterfaceError)
REASON_MAX = 200  # Item.failed_reason's length
# The columns psycopg may be unable to read back (a time stored at year 10000 in UTC).
_DATE_COLUMNS = ("at", "expires")


def is_transient(error: BaseException) -> bool:
    return isinstance(error, TRANSIENT)


# The step of the read a raising function belongs to, named in the reason.
_STEPS = {"record_facts": "facts", "cut": "text", "_lock_threads": "thread", "_previous": "thread"}


def reason(error: BaseException, where: str | None = None) -> str:
    """One line: the exception's class and the field or step that raised (read from its traceback when
    `where` is not given)."""
    if where is None:
        frames = [frame.f_code.co_name for frame, _ in traceback.walk_tb(error.__traceback__)]
        where = next((_STEPS[name] for name in reversed(frames) if name in _STEPS), "passages")
    return f"{error.__class__.__name__} in {where}"[:REASON_MAX]


def unreadable_column(memory: Memory, pk: int) -> str | None:
    """The first date column of the memory's item `pk` that cannot be read back, if any."""
    for column in _DATE_COLUMNS:
        try:
            with transaction.atomic():  # a savepoint: the failed read must not end the caller's transaction
                list(memory.items().filter(pk=pk).values_list(column, flat=True))
        except DataError:
            return column
    return None


def mark_failed(memory: Memory, failures: dict[int, tuple[int, str]]) -> None:
    """Mark each of the memory's items failed at the version whose read raised ({pk: (version, reason)});
    an item edited since, or read meanwhile, is let be."""
    now = timezone.now()
    with memory.scoped():
        added_by = dict(memory.items().filter(pk__in=list(failures)).values_list("pk", "request_id"))
        for pk, (version, why) in failures.items():
            memory.items().filter(pk=pk, version=version).exclude(read_version=F("version")).update(
                failed_version=version, failed_reason=with_request(why, added_by.get(pk)), failed_at=now
            )


def with_request(why: str, request_id: str | None) -> str:
    """The reason, naming the request that added (or last edited) the item when it is known."""
    return (f"{why} (added by request {request_id})" if request_id else why)[:REASON_MAX]
