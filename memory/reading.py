"""The background read: what memory makes of an added item.

For each item whose read is behind its version: its thread, its passages (one for a message or note, a
document cut at paragraph bounds), an embedding per passage, full text (a generated column), and the
written index. Idempotent: an item already read at its current version is skipped, so running a read twice,
or concurrently, changes nothing.
"""

import logging
from collections import defaultdict
from datetime import timedelta

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import EndUser

from . import embeddings
from .cutting import cut
from .models import Item, Passage, Thread
from .paths import passage_path, thread_id
from .selectors import Memory
from .written_index import rewrite_index

log = logging.getLogger(__name__)


def _thread_key(item: Item) -> tuple[str, str]:
    """(kind, key): a message joins its session's thread; a document is its own; a note joins its session's."""
    if item.kind == "document" or not item.session:
        return item.kind, f"item:{item.external_id}"
    return item.kind, f"session:{item.session}"


def _pieces(item: Item) -> list[str]:
    return cut(item.text) if item.kind == "document" else [item.text.strip() or item.text]


def _embedding_text(item: Item, piece: str) -> str:
    return f"{item.title}\n{piece}" if item.title else piece


def _thread_for(item: Item) -> Thread:
    kind, key = _thread_key(item)
    tid = thread_id(item.end_user_id, kind, key)
    thread, _ = Thread.objects.get_or_create(
        end_user_id=item.end_user_id,
        kind=kind,
        key=key,
        defaults={"tid": tid, "title": item.title or (item.session if key.startswith("session:") else "")},
    )
    return Thread.objects.select_for_update().get(pk=thread.pk)


def _write(item_pk: int, version: int, pieces: list[str], vectors) -> bool:
    """Replace the item's passages in one transaction; False when the item moved on meanwhile."""
    with transaction.atomic():
        item = Item.objects.select_for_update().filter(pk=item_pk).first()
        if item is None or item.version != version or item.is_read:
            return False
        thread = _thread_for(item)
        old = list(Passage.objects.filter(item=item).order_by("thread_id", "seq"))
        reusable = [p.seq for p in old if p.thread_id == thread.pk]
        Passage.objects.filter(item=item).delete()
        rows = []
        for i, (piece, vector) in enumerate(zip(pieces, vectors)):
            if reusable:
                seq = reusable.pop(0)
            else:
                seq = thread.next_seq
                thread.next_seq += 1
            rows.append(
                Passage(
                    end_user_id=item.end_user_id, thread=thread, item=item, seq=seq,
                    path=passage_path(thread.source, thread.kind, thread.tid, seq), kind=item.kind, at=item.at,
                    expires=item.expires, author=item.author, role=item.role, title=item.title,
                    about=item.about, text=piece, item_ids=[item.external_id], embedding=vector,
                    model=embeddings.MODEL_ID,
                )
            )
        Passage.objects.bulk_create(rows)
        thread.save(update_fields=["next_seq"])
        item.read_version = version
        item.read_at = timezone.now()
        item.save(update_fields=["read_version", "read_at"])
        return True


def read_items(item_pks: list[int]) -> int:
    """Read the given items (those behind their version); returns how many were read now."""
    pending = list(
        Item.objects.filter(pk__in=item_pks).exclude(read_version=F("version")).order_by("at", "pk")
    )
    if not pending:
        return 0
    work = [(item, _pieces(item)) for item in pending]
    texts = [_embedding_text(item, piece) for item, pieces in work for piece in pieces]
    vectors = iter(embeddings.embed(texts))
    done, touched = 0, defaultdict(int)
    for item, pieces in work:
        item_vectors = [next(vectors) for _ in pieces]
        if _write(item.pk, item.version, pieces, item_vectors):
            done += 1
            touched[item.end_user_id] += 1
    for end_user in EndUser.objects.filter(pk__in=touched):
        rewrite_index(Memory(end_user))
    return done


def unread_item_pks(*, older_than: timedelta = timedelta(seconds=0), limit: int = 5_000) -> list[int]:
    """Items whose read is behind (never read, or edited since), oldest first: the sweep's work."""
    cutoff = timezone.now() - older_than
    return list(
        Item.objects.filter(Q(read_at__isnull=True) | ~Q(read_version=F("version")), updated_at__lte=cutoff)
        .order_by("updated_at")
        .values_list("pk", flat=True)[:limit]
    )
