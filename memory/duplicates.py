"""Duplicates caught on write: an item sent without an id that says again what memory already holds.

Two items are the same when their kind, author and normal text agree (NFKC, case folded, whitespace
collapsed), and for a message also its session and time: a retried send, not a second "ok" in the same
conversation. Their `content_hash` (SHA-256 of those) is kept on every item, so an item sent without an id is
answered `duplicate` with the id of the item it repeats, whoever named that one, and is not stored again.

An item with a caller's id is never merged: the id is the caller's identity, so it is stored (or edited) as
sent. Items whose id memory generated are held unique by content (the partial unique index
`one_item_per_content`), so two adds of one text at the same moment cannot both store it: the second insert
waits for the first to commit, then stores nothing (ON CONFLICT DO NOTHING) and finds the first's id. A
call's items without an id are looked up in one query and stored in one statement.
"""

import hashlib
import json
import unicodedata
from datetime import UTC
from typing import cast

from .models import Item
from .selectors import Memory

MESSAGE = "message"  # the kind whose session and time are part of what makes it the same


def normal_form(text: str) -> str:
    """The text as duplicates are compared: NFKC, case folded (then NFKC again, as folding can undo it),
    every run of whitespace one space, no space at either end."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return " ".join(folded.split())


def content_hash(fields: dict) -> str:
    """What a duplicate shares with its original, as 64 hex digits: the item's kind, author and normal text,
    and for a message its session and time (in UTC, so one moment written with two offsets agrees)."""
    message = fields["kind"] == MESSAGE
    key = [
        fields["kind"],
        fields.get("author") or "",
        normal_form(fields["text"]),
        (fields.get("session") or "") if message else "",
        fields["at"].astimezone(UTC).isoformat() if message and fields.get("at") else "",
    ]
    return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode()).hexdigest()


def originals_of(memory: Memory, digests) -> dict[str, str]:
    """digest -> the id of the item in this memory an item of that digest would repeat (the first stored),
    for the digests some item holds."""
    rows = (
        memory.items().filter(content_hash__in=set(digests)).order_by("pk").values_list("content_hash", "external_id")
    )
    originals: dict[str, str] = {}
    for digest, external_id in rows:
        originals.setdefault(cast(str, digest), external_id)  # never null: filtered on
    return originals


def store_unless_duplicates(memory: Memory, new: dict[str, tuple[str, dict]]) -> dict[str, Item]:
    """Store items sent without an id, `new` being digest -> (the id memory generated, the item's fields),
    in one statement; returns digest -> the item stored. An item of the same content that got there first
    (committed, or earlier in this transaction) keeps its place and that digest is left out: the insert
    waits for a concurrent add of it to commit, so originals_of then finds it."""
    Item.objects.bulk_create(
        [
            Item(end_user=memory.end_user, external_id=external_id, content_hash=digest, caller_id=False, **fields)
            for digest, (external_id, fields) in new.items()
        ],
        ignore_conflicts=True,
    )
    stored = memory.items().filter(external_id__in=[external_id for external_id, _ in new.values()])
    by_id = {item.external_id: item for item in stored}
    return {digest: by_id[external_id] for digest, (external_id, _) in new.items() if external_id in by_id}
