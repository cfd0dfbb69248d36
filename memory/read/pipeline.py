"""The background read: what memory makes of an added item.

For each item whose read is behind its version: its thread, its passages (one for a message or note, a
document cut at paragraph bounds), their vectors (the passage; the passage with the one before it, mixed
from the two passages' vectors; each sentence of a long passage), full text (a generated column) and its
statistics, the facts it states, and the written index. Idempotent: an item already read at its current
version is skipped, so running a read twice, or concurrently, changes nothing.

In three steps: `prepare` (the items, cut into pieces: pieces.py), `embed` (the model alone, no database)
and `write` (linked to the passages before them, then written), so that a turn of the read embeds one slice
while it writes the one before (memory/tasks.py `_read_turn`); `read_items` runs the three in a row.
"""

import logging

import numpy as np
from django.db import DataError, transaction
from django.db.models import F, Q
from django.utils import timezone

from memory.model import embeddings

from ..models import Item, Passage, PassageSentence, Thread
from ..paths import passage_path, thread_id
from ..selectors import Memory
from . import failures as failed
from . import notices, stats
from .facts import record_facts
from .passage_insert import insert_passages
from .pieces import Piece, context_of, pieces_of, reuse_vectors
from .written_index import rewrite_index

log = logging.getLogger(__name__)

SESSION_KEY = "session:"  # how a thread of a session's items is keyed (else "item:<id>", an item's own)


def _thread_key(item: Item) -> tuple[str, str]:
    """(kind, key): a message joins its session's thread; a document is its own; a note joins its session's."""
    if item.kind == "document" or not item.session:
        return item.kind, f"item:{item.external_id}"
    return item.kind, f"{SESSION_KEY}{item.session}"


def _previous(memory: Memory, item: Item) -> tuple[int, np.ndarray] | None:
    """The passage before this item's in its thread, as it stands in the database: its length and vector."""
    kind, key = _thread_key(item)
    thread = memory.threads().filter(kind=kind, key=key).first()
    if thread is None or kind == "document":
        return None
    own = memory.passages().filter(item=item, thread=thread).order_by("seq").values_list("seq", flat=True).first()
    earlier = memory.passages().filter(thread=thread, embedding__isnull=False)
    earlier = earlier.filter(seq__lt=own) if own else earlier
    found = earlier.order_by("-seq").values_list("text", "embedding").first()
    return (len(found[0]), np.asarray(found[1], dtype=np.float32)) if found else None


def embed(work: list[tuple[Item, list[Piece]]]) -> None:
    """All the slice's vectors the read has not kept from before, in one call to the model: each passage
    once, and the sentences of the long ones. Touches no database, so it may run on a thread of its own
    while the slice before is written (memory/tasks.py `_read_turn`)."""
    new = [p for _, pieces in work for p in pieces if "text" not in p.vectors]
    texts = [p.embed_text for p in new] + [sentence for p in new for sentence in p.sentences]
    vectors = iter(embeddings.embed(texts))
    for p in new:
        p.vectors["text"] = next(vectors)
    for p in new:
        p.vectors["sentences"] = [next(vectors) for _ in p.sentences]


def thread_title(item: Item, key: str) -> str:
    """A thread's title, from its first item: the item's title, else the session that groups it."""
    return item.title or (item.session if key.startswith(SESSION_KEY) else "")


def _lock_threads(memory: Memory, items: list[Item], locked: dict[tuple, Thread]) -> None:
    """Lock the threads of the items for this transaction, in one statement (two where one is new), making
    those an item is the first of; `locked` keeps the threads this transaction holds already. A statement or
    three a thread would make up much of the slice's statements (bench/README.md "Adding")."""
    wanted: dict[tuple, Item] = {}
    for item in items:
        wanted.setdefault(_thread_key(item), item)
    for key in locked:
        wanted.pop(key, None)
    if not wanted:
        return
    found = _locked_threads(memory, wanted)
    missing = {key: item for key, item in wanted.items() if key not in found}
    if missing:  # another read may make the same thread meanwhile: its row is then the one locked
        Thread.objects.bulk_create(
            [
                Thread(
                    end_user=memory.end_user,
                    kind=kind,
                    key=key,
                    tid=thread_id(item.end_user_id, kind, key),
                    title=thread_title(item, key),
                )
                for (kind, key), item in missing.items()
            ],
            ignore_conflicts=True,
        )
        found |= _locked_threads(memory, missing)
    if len(found) < len(wanted):
        raise Thread.DoesNotExist("A thread could be neither made nor found for its key.")
    locked.update(found)


def _locked_threads(memory: Memory, keys) -> dict[tuple, Thread]:
    either = Q()
    for kind, key in keys:
        either |= Q(kind=kind, key=key)
    threads = memory.threads().select_for_update().filter(either).order_by("pk")
    return {(thread.kind, thread.key): thread for thread in threads}


def _passage(item: Item, thread: Thread, piece: Piece, reusable: list[int]) -> Passage:
    """The passage a piece of the item becomes: at one of the item's old places in this thread while any
    is left (an edit keeps its passages' addresses), else at the thread's next."""
    if reusable:
        seq = reusable.pop(0)
    else:
        seq = thread.next_seq
        thread.next_seq += 1
    return Passage(
        end_user_id=item.end_user_id,
        thread=thread,
        item=item,
        seq=seq,
        path=passage_path(thread.source, thread.kind, thread.tid, seq),
        kind=item.kind,
        at=item.at,
        expires=item.expires,
        author=item.author,
        role=item.role,
        title=item.title,
        about=item.about,
        text=piece.text,
        item_ids=[item.external_id],
        embedding=piece.vectors["text"],
        context_embedding=piece.vectors["context"],
        model=embeddings.MODEL_ID,
    )


def _sentences(written: list[tuple[Item, list[Passage], list[Piece]]]) -> list[PassageSentence]:
    return [
        PassageSentence(end_user_id=item.end_user_id, passage=row, embedding=vector)
        for item, rows, pieces in written
        for row, piece in zip(rows, pieces, strict=True)
        for vector in piece.vectors["sentences"]
    ]


def _write_slice(memory: Memory, work: list[tuple[Item, list[Piece]]], locked: dict[tuple, Thread]) -> int:
    """Replace the passages of the slice's items, inside its transaction, in a few statements for all of
    them (their locks, old passages, new passages and sentences, statistics, read marks) instead of about a
    dozen an item, which made the writes a large share of a slice's read (bench/README.md "Adding"). Facts are still
    recorded an item at a time, in the slice's order, since an item may correct what an earlier one said.
    Returns how many were written; an item that moved on meanwhile (edited, read, gone) is left."""
    # The end user's row is locked with the items', so one memory's writes (and its statistics) take turns.
    # No key update: an add's new items check their end user with a key share, which this lets through.
    versions = {item.pk: item.version for item, _ in work}
    current = {
        item.pk: item
        for item in memory.items()
        .select_for_update(no_key=True)
        .select_related("end_user")
        .filter(pk__in=versions)
        .order_by("pk")
    }
    todo = [
        (current[item.pk], pieces)
        for item, pieces in work
        if item.pk in current and current[item.pk].version == versions[item.pk] and not current[item.pk].is_read
    ]
    if not todo:
        return 0
    old = list(memory.passages().filter(item__in=[item for item, _ in todo]).order_by("thread_id", "seq"))
    stats.uncount_passages(memory, [p.pk for p in old])
    memory.passages().filter(pk__in=[p.pk for p in old]).delete()
    _lock_threads(memory, [item for item, _ in todo], locked)
    written = []
    for item, pieces in todo:
        thread = locked[_thread_key(item)]
        reusable = [p.seq for p in old if p.item_id == item.pk and p.thread_id == thread.pk]
        written.append((item, [_passage(item, thread, piece, reusable) for piece in pieces], pieces))
    rows = [row for _, own, _ in written for row in own]
    insert_passages(rows)
    PassageSentence.objects.bulk_create(_sentences(written))
    stats.count_passages(memory, [row.pk for row in rows])
    Thread.objects.bulk_update(list(locked.values()), ["next_seq"])
    memory.recount_threads([thread.pk for thread in locked.values()] + [p.thread_id for p in old])
    for item, own, _ in written:
        record_facts(memory, item, own)
    # Each is locked at the version it was read at: one UPDATE marks them all (bulk_update would send a CASE
    # per row).
    memory.items().filter(pk__in=[item.pk for item, _, _ in written]).update(
        read_version=F("version"), read_at=timezone.now()
    )
    return len(written)


def _write_all(
    memory: Memory, work: list[tuple[Item, list[Piece]]], failures: dict | None, *, index: bool = True
) -> int:
    """Write the slice's items in one transaction (not one per item: bench/README.md "Adding"), all at once;
    when that raises, each in a savepoint of its own, so an item whose write raises is set aside and the
    rest are written; then index.md, unless `index` is False. Returns how many were written."""
    locked: dict[tuple, Thread] = {}
    with memory.scoped():
        try:
            with transaction.atomic():
                done = _write_slice(memory, work, locked)
        except Exception:  # noqa: BLE001 - some item's fault: written one at a time, it is found and set aside
            done = _write_each(memory, work, failures)
    if done and index:  # after the commit, so the item and end user rows are not held while index.md is drawn
        with memory.scoped():
            rewrite_index(memory)
    return done


def _write_each(memory: Memory, work: list[tuple[Item, list[Piece]]], failures: dict | None) -> int:
    """Write the items one at a time, each in a savepoint: an item whose write raises is set aside."""
    done = 0
    locked: dict[tuple, Thread] = {}
    for item, pieces in work:
        try:
            with transaction.atomic():
                done += _write_slice(memory, [(item, pieces)], locked)
        except Exception as error:  # noqa: BLE001 - one item's fault must not stop its slice
            locked.clear()  # a thread's next_seq may be ahead of its rolled-back row: read them again
            _set_aside(failures, item, error)
    return done


def _pending(memory: Memory, item_pks: list[int], failures: dict | None) -> list[Item]:
    """The memory's items among `item_pks` behind their version, oldest first. A row that cannot be loaded
    (a date stored before dates were bounded) is set aside in `failures`, so the rest are still read."""
    pending = memory.unread_items(item_pks)
    try:
        with transaction.atomic():  # a savepoint: a row psycopg cannot read must not end the transaction
            return list(pending)
    except DataError:
        if failures is None:
            raise
    loaded = []
    for pk, version in pending.order_by("pk").values_list("pk", "version"):
        try:
            with transaction.atomic():
                loaded.append(pending.get(pk=pk))
        except DataError as error:
            failures[pk] = (version, failed.reason(error, failed.unreadable_column(memory, pk) or "item"))
    return loaded


def _set_aside(failures: dict | None, item: Item, error: Exception) -> None:
    """Record why `item`'s read raised, or raise when the caller keeps no failures (or the database is away)."""
    if failures is None or failed.is_transient(error):
        raise error
    failures[item.pk] = (item.version, failed.reason(error))
    log.warning("The read of item %s raised: %s", item.pk, failures[item.pk][1])


def prepare(memory: Memory, item_pks: list[int], failures: dict | None = None) -> list[tuple[Item, list[Piece]]]:
    """The memory's items among `item_pks` behind their version, oldest first, each cut into the pieces it
    becomes, with the vectors an edit keeps from before; the model is not called."""
    with memory.scoped():
        work = []
        for item in _pending(memory, item_pks, failures):
            try:
                work.append((item, pieces_of(item)))
            except Exception as error:  # noqa: BLE001 - one item's fault must not stop its slice
                _set_aside(failures, item, error)
        reuse_vectors(memory, work)
    return work


def _link(
    memory: Memory, work: list[tuple[Item, list[Piece]]], failures: dict | None
) -> list[tuple[Item, list[Piece]]]:
    """Link each message's first piece to the passage before it, earlier in this slice or as its thread
    stands now, and mix every piece's context vector. Done when the slice is written, after the slice
    before it: a slice embedded while that one was written links as if read after it."""
    last_in_slice: dict[tuple, Piece | None] = {}
    linked = []
    with memory.scoped():
        for item, pieces in work:
            key = _thread_key(item)
            try:
                if key in last_in_slice:
                    pieces[0].previous = last_in_slice[key]
                else:  # a savepoint, so one item's fault leaves the transaction usable: two statements, so
                    # only where the database is asked
                    with transaction.atomic():
                        pieces[0].previous = _previous(memory, item)
            except Exception as error:  # noqa: BLE001 - one item's fault must not stop its slice
                _set_aside(failures, item, error)
                continue
            last_in_slice[key] = pieces[-1] if item.kind != "document" else None
            for piece in pieces:
                piece.vectors["context"] = context_of(piece)
            linked.append((item, pieces))
    return linked


def write(
    memory: Memory, work: list[tuple[Item, list[Piece]]], failures: dict | None = None, *, index: bool = True
) -> int:
    """Write the embedded slice (prepare, then embed): its links, passages, statistics, facts and index.md
    (unless `index` is False: the next slice, already under way, draws it), then announce it to the adds
    that wait. Returns how many items were read now."""
    done = _write_all(memory, _link(memory, work, failures), failures, index=index)
    if done:
        notices.announce_read(memory.end_user.pk)  # committed: a `wait` add of this end user looks again
    return done


def read_items(memory: Memory, item_pks: list[int], failures: dict | None = None) -> int:
    """Read the memory's given items (those behind their version); returns how many were read now.

    Each step is a transaction scoped to the memory; the model embeds between them, holding none. With
    `failures` (a dict), an item whose read raises is set aside there as {pk: (version, reason)} and the rest
    of the batch is read; without it, the first such error is raised.
    """
    work = prepare(memory, item_pks, failures)
    if not work:
        return 0
    embed(work)
    return write(memory, work, failures)
