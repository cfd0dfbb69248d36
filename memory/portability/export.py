"""The export: an end user's memory as the lines of docs/export-format.md, streamed.

Every line comes from one snapshot: a REPEATABLE READ, READ ONLY transaction under the end user's scope, so
an add, edit or forget landing meanwhile is either wholly in the file or not at all. Items are read through
a server-side cursor (`.iterator`), EXPORT_CHUNK at a time with their versions and facts, so the memory an
export holds does not grow with the memory exported (bench: docs/export-format.md "Size").

An export holds its database connection for as long as its client reads, so a web process streams at most
EXPORTS_AT_ONCE at a time (`ExportSlot`); one more is answered 503 with Retry-After.
"""

import contextlib
import json
import threading
from collections.abc import Generator, Iterable, Iterator
from itertools import islice

from django.db import connection, transaction
from django.utils import timezone

from accounts.errors import ApiError

from ..limits import EXPORT_CHUNK, EXPORT_RETRY_AFTER_SECONDS, EXPORTS_AT_ONCE
from ..models import Fact, ItemVersion
from ..selectors import Memory
from . import format as fmt

CONTENT_TYPE = "application/x-ndjson"
_SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"
_slots = threading.BoundedSemaphore(EXPORTS_AT_ONCE)


class ExportsBusy(ApiError):
    """EXPORTS_AT_ONCE exports are streaming from this process: 503 `unavailable`, to be asked again after
    Retry-After (the shape of every busy answer)."""

    def __init__(self):
        super().__init__(
            503,
            "unavailable",
            f"{EXPORTS_AT_ONCE} exports are already streaming from this server "
            f"process. Try again in {EXPORT_RETRY_AFTER_SECONDS} s.",
            retry_after=EXPORT_RETRY_AFTER_SECONDS,
        )


class ExportStream:
    """An export's lines as a response body that holds one of the process's export slots until it is closed
    (read to the end, or the client gone): the server closes a response it has sent, read or not."""

    def __init__(self, memory: Memory):
        if not _slots.acquire(blocking=False):
            raise ExportsBusy()
        self._lines = export_lines(memory)
        self._lock = threading.Lock()
        self._held = True

    def __iter__(self) -> Iterator[bytes]:
        return self._lines

    def close(self) -> None:
        self._lines.close()  # a stream left half read rolls its transaction back here
        with self._lock:
            if self._held:
                self._held = False
                _slots.release()


def _line(value: dict) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _chunks(rows: Iterable, size: int) -> Iterator[list]:
    rows = iter(rows)
    while chunk := list(islice(rows, size)):
        yield chunk


@contextlib.contextmanager
def _snapshot(memory: Memory):
    """One REPEATABLE READ, READ ONLY transaction in the memory's scope. It must be a transaction of its own:
    the isolation level is set before its first statement."""
    if connection.in_atomic_block:
        raise RuntimeError("An export reads one snapshot: it needs a transaction of its own.")
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(_SNAPSHOT)
        with memory.scoped():
            yield


def export_lines(memory: Memory) -> Generator[bytes]:
    """The memory as export lines (UTF-8 JSON, one per line): the header, then every item, oldest first,
    with its versions and facts. Forgotten items are gone from the memory, so from the file too. A chunk of
    EXPORT_CHUNK items is one yield."""
    with _snapshot(memory):
        items = memory.items().order_by("pk")
        yield _line(fmt.header(memory.end_user, items=items.count(), exported_at=timezone.now()))
        for chunk in _chunks(items.iterator(chunk_size=EXPORT_CHUNK), EXPORT_CHUNK):
            yield b"".join(_line(line) for line in _item_lines(memory, chunk))


def _item_lines(memory: Memory, items: list) -> list[dict]:
    """The chunk's lines: its items' versions and facts in one query each."""
    pks = [item.pk for item in items]
    versions: dict[int, list[ItemVersion]] = {}
    facts: dict[int | None, list[Fact]] = {}  # a fact's item is never null here: filtered on
    for version in memory.versions_of(pks):
        versions.setdefault(version.item_id, []).append(version)
    for fact in memory.facts().filter(item_id__in=pks).order_by("item_id", "pk"):
        facts.setdefault(fact.item_id, []).append(fact)
    return [fmt.item_line(item, versions.get(item.pk, []), facts.get(item.pk, [])) for item in items]


def file_name(memory: Memory) -> str:
    """What a download is saved as: the project, the end user and the day (an end user id's ':' and '@'
    are kept out of the name)."""
    account = memory.end_user.external_id.replace(":", "_").replace("@", "_")
    return f"twin-memory-{memory.end_user.project.slug}-{account}-{timezone.now():%Y-%m-%d}.jsonl"
