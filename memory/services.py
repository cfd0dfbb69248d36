"""Writes on memory: add (and edit by id), correct, forget; and an item's versions. Each takes the end user's
Memory; reads are in query/."""

import logging
import time
import uuid
from typing import cast

from django.db import IntegrityError, InterfaceError, OperationalError, connection, transaction
from django.db.backends.postgresql.base import DatabaseWrapper as PostgresWrapper
from django.db.models import F, QuerySet
from django.utils import timezone

from accounts.services import end_user_touch
from memory.routes.answers import ADDED, DUPLICATE, EDITED, REFUSED, UNCHANGED
from memory.secrets.detect import find_secret
from memory.secrets.gate import REDACTED, redacts, refused_error, screen_item
from twin.requestid import request_id_or_blank

from . import erasure, fairness, tasks
from .duplicates import content_hash, originals_of, store_unless_duplicates
from .errors import CannotAnswer, InvalidArguments
from .limits import ADD_ATTEMPTS, DEFAULT_KIND, WAIT_SECONDS
from .models import Item, ItemVersion
from .read import notices
from .read.written_index import rewrite_index
from .selectors import Memory

log = logging.getLogger(__name__)
EXTERNAL_ID_HEX = 16  # hex digits of a generated item id (it_<16 hex>): 64 bits, no collision in practice

# The fields an item keeps besides its text; an edit that changes none of them (nor the text) is "unchanged".
ITEM_FIELDS = ("kind", "at", "author", "role", "session", "title", "about", "expires", "metadata")


def _incoming(raw: dict, existing: Item | None) -> dict:
    """An item's stored fields from a validated request item (its dates parsed); an edit keeps what it does
    not resend."""
    fields = {"text": raw["text"]}
    for name in ITEM_FIELDS:
        if name in raw:
            fields[name] = raw[name]
        elif existing is not None:
            fields[name] = getattr(existing, name)
        else:
            fields[name] = {"kind": DEFAULT_KIND, "at": timezone.now(), "expires": None, "metadata": {}}.get(name, "")
    return fields


def _snapshot(item: Item) -> dict:
    return {
        name: (value.isoformat() if hasattr(value, "isoformat") else value)
        for name in ITEM_FIELDS
        if (value := getattr(item, name)) is not None
    }


def _edit(item: Item, fields: dict) -> bool:
    """Apply `fields` to `item`, keeping its earlier text as a version. False when nothing changed.

    An edit names the item by its id, so from now on the id is the caller's (never merged by content)."""
    if all(getattr(item, name) == value for name, value in fields.items()):
        return False
    ItemVersion.objects.create(item=item, version=item.version, text=item.text, fields=_snapshot(item))
    for name, value in fields.items():
        setattr(item, name, value)
    item.content_hash = content_hash(_fields_of(item))
    item.caller_id = True
    item.request_id = request_id_or_blank()
    item.version += 1
    item.read_at = None
    item.save()
    return True


def _fields_of(item: Item) -> dict:
    return {"text": item.text, **{name: getattr(item, name) for name in ITEM_FIELDS}}


def memory_add(*, memory: Memory, items: list[dict], wait: bool = False) -> dict:
    """Store `items` durably in one transaction, queue their background read (on commit), and answer which
    are searchable: with `wait`, once every item is, or after WAIT_SECONDS saying so (_wait_for_reads).

    An item whose id exists is edited (its earlier text kept as a version) or, when identical, left
    unchanged. Refused whole (ReadBacklogFull, 429) when the project's queued read work would pass its cap.
    A refused item never will be searchable, and is waited for by no one.
    """
    fairness.check_backlog(memory.end_user.project_id, len(items), sum(len(item["text"]) for item in items))
    stored = store_items(memory=memory, items=items)
    ids = [result["id"] for result in stored if result["status"] != REFUSED]
    read = _read_now(memory, ids)
    if wait and not read >= set(ids):
        read = _wait_for_reads(memory, ids)
    results = [
        result if result["status"] == REFUSED else {**result, "searchable": result["id"] in read} for result in stored
    ]
    answer = {
        "items": results,
        "searchable": all(result["searchable"] for result in results if result["status"] != REFUSED),
    }
    if wait and not answer["searchable"]:
        answer["message"] = (
            f"Stored; not every item was searchable after {WAIT_SECONDS} s. The background read will finish them."
        )
    return answer


def store_items(*, memory: Memory, items: list[dict]) -> list[dict]:
    """Store validated `items` as memory_add does, each answered `{"id", "status"}`: the one path every
    item is stored by (memory_add, the import), so whatever _store checks holds for all of them. Runs in a
    transaction of its own scoped to the memory, or a savepoint of the caller's; their read is queued when
    that commits."""
    for _ in range(ADD_ATTEMPTS - 1):
        try:
            return _store(memory, items)
        except IntegrityError:
            # A call adding the same new id at the same moment inserted it first: store again, finding the
            # row now, so this call edits it (or leaves it unchanged) and every call gets a definite answer.
            continue
    return _store(memory, items)


def _read_now(memory: Memory, ids: list[str]) -> set[str]:
    """Which of `ids` are read at their current version, in a short transaction of its own (so the background
    read's writes are seen as they land). Empty when the database cannot say: the items are stored, so the
    add still answers, saying they are not searchable yet."""
    try:
        with memory.scoped():
            return set(
                memory.items()
                .filter(external_id__in=ids, read_version=F("version"))
                .values_list("external_id", flat=True)
            )
    except (OperationalError, InterfaceError) as error:  # busy or away (twin/unavailable.py)
        log.warning("Stored, but could not look whether searchable: %s", error.__class__.__name__)
        return set()


def _wait_for_reads(memory: Memory, ids: list[str]) -> set[str]:
    """Wait up to WAIT_SECONDS for the read of `ids` while holding no database connection: the worker's
    notice of each committed read (read/notices.py) wakes this for a look, as does the deadline. Answers at
    once when half this process's threads already wait, or Redis does not answer."""
    deadline = time.monotonic() + WAIT_SECONDS
    with notices.listening(memory.end_user.pk) as listener:
        # Listening from here on: a read that committed before was announced to no one, so look again.
        read = _read_now(memory, ids)
        while listener is not None and not read >= set(ids):
            _hand_back_connection()
            announced = listener.next(deadline)
            read = _read_now(memory, ids)
            if not announced:  # the deadline, or Redis gone: that look was the last
                break
    return read


def _hand_back_connection() -> None:
    """Return a pooled connection to the pool before only waiting (Django would keep it to the request's
    end). A process without a pool keeps its one connection: closing it would only cost a reconnect."""
    # `pool` is the PostgreSQL backend's (our only one); `connection` is typed as the base wrapper.
    if cast(PostgresWrapper, connection).pool is not None and not connection.in_atomic_block:
        connection.close()


def _store(memory: Memory, items: list[dict]) -> list[dict]:
    """Store `items` in one transaction scoped to the memory (a savepoint inside the caller's) and queue their
    read on commit; one answer entry per item, in order (memory_add's, and import's, way to store).

    Each item first passes the secret gate (secret_gate.py: refused, or redacted, as the project chose)
    before anything of it is written or looked up; then an item sent without an id that repeats one already
    stored is answered `duplicate` and not stored again (duplicates.py). An item with an id is the caller's.
    """
    redact = redacts(memory)
    screened = [screen_item(raw, redact=redact) for raw in items]
    results: list[dict | None] = [None] * len(items)
    stored: list[Item] = []
    with memory.scoped():
        ids: dict[str, str] = {}  # each id, by the field of the first item naming it
        for index, screen in enumerate(screened):
            if screen.item and screen.item.get("id"):
                ids.setdefault(screen.item["id"], f"items[{index}].id")
        with memory.readable(ids):
            existing = {
                item.external_id: item for item in memory.items().select_for_update().filter(external_id__in=ids)
            }
        without_ids = []
        for index, (raw, screen) in enumerate(zip(items, screened, strict=True)):
            if screen.item is None:
                results[index] = screen.refusal(f"items[{index}].", raw)
            elif screen.item.get("id"):
                results[index], by_id = _store_by_id(memory, screen.item, existing)
                stored.append(by_id)
            else:
                without_ids.append(index)
        # The call's new ids in one statement, not one each (bench/README.md "Adding").
        Item.objects.bulk_create([item for item in stored if item.pk is None])
        # Last, so an item without an id is also caught repeating one this call stored by its id.
        # Only items the gate passed are in without_ids, so each has its screened item.
        loose = [cast(dict, screened[index].item) for index in without_ids]
        for index, (result, loose_item) in zip(without_ids, _store_without_ids(memory, loose), strict=True):
            results[index] = result
            stored += [loose_item] if loose_item else []
        answers: list[dict] = [cast(dict, result) for result in results]  # every item has its entry by now
        for index, screen in enumerate(screened):
            if screen.redacted:
                answers[index]["redacted"] = [found.as_dict(f"items[{index}].") for found in screen.redacted]
        end_user_touch(end_user=memory.end_user)
        if any(not item.is_read for item in stored):
            transaction.on_commit(lambda: enqueue_read(memory))
    return answers


def _store_by_id(memory: Memory, raw: dict, existing: dict[str, Item]) -> tuple[dict, Item]:
    """An item sent with an id: edited or left unchanged when that id exists, else added (the Item returned
    unsaved: the caller inserts the call's new items together)."""
    external_id = raw["id"]
    item = existing.get(external_id)
    fields = _incoming(raw, item)
    if item is None:
        item = Item(end_user=memory.end_user, external_id=external_id, content_hash=content_hash(fields), **fields)
        return {"id": external_id, "status": ADDED}, item
    return {"id": external_id, "status": EDITED if _edit(item, fields) else UNCHANGED}, item


def _store_without_ids(memory: Memory, raws: list[dict]) -> list[tuple[dict, Item | None]]:
    """Items sent without an id, in order: each added under a generated id, or a duplicate of the item it
    repeats (stored before, or earlier in this call; then no item is returned: nothing was stored)."""
    fields = [_incoming(raw, None) for raw in raws]
    digests = [content_hash(each) for each in fields]
    originals = originals_of(memory, digests)
    new: dict[str, tuple[str, dict]] = {}  # the first item of each content not stored yet
    for digest, each in zip(digests, fields, strict=True):
        if digest not in originals and digest not in new:
            new[digest] = (f"it_{uuid.uuid4().hex[:EXTERNAL_ID_HEX]}", each)
    added = store_unless_duplicates(memory, new) if new else {}
    lost = [digest for digest in new if digest not in added]  # to an add of the same content at once
    if lost:
        originals.update(originals_of(memory, lost))
        if not set(lost) <= set(originals):  # the conflict was with something else: memory_add stores again
            raise IntegrityError("An item without an id collided with neither an id nor a content.")
    answers: list[tuple[dict, Item | None]] = []
    for digest in digests:
        item = added.pop(digest, None)
        if item is not None:
            answers.append(({"id": item.external_id, "status": ADDED}, item))
        else:
            original = originals.get(digest) or new[digest][0]
            answers.append(({"id": original, "status": DUPLICATE, "duplicate_of": original}, None))
    return answers


def enqueue_read(memory: Memory) -> None:
    """Queue the read of the memory's unread items: a turn of its project's read (memory/fairness.py). If
    the broker is down the items stay stored and unread; the sweep finds them."""
    tasks.queue_project_read(memory.end_user.project_id)


def _item(memory: Memory, external_id: str) -> Item:
    """The memory's item `external_id`, named by the argument `id`; or CannotAnswer: not found, or stored
    with a date this service cannot read back."""
    with memory.readable({external_id: "id"}):
        item = memory.items().filter(external_id=external_id).first()
    if item is None:
        # The message is kept among Usage's last errors: an id holding a secret is named by its kind only.
        kind = find_secret(external_id)
        named = REDACTED.format(kind) if kind else repr(external_id)
        raise CannotAnswer("not_found", f"No item with id {named} in this memory.")
    return item


def memory_correct(*, memory: Memory, id: str, text: str) -> dict:
    """Fix an item's text, keeping the old text as a version; the item is read again.

    A text (or an id) holding a secret is refused, 400 naming the field and the secret's kind, and the item
    stays as it was; a project that redacts stores the text redacted and says where."""
    with memory.scoped():
        memory.must_hold_items()
        screen = screen_item({"id": id, "text": text}, redact=redacts(memory))
        if screen.item is None:
            assert screen.refused is not None, "the gate names what it refused an item for"
            raise refused_error(screen.refused)
        item = _item(memory, id)
        item = memory.items().select_for_update().get(pk=item.pk)
        changed = _edit(item, {"text": screen.item["text"]})
        if changed:
            transaction.on_commit(lambda: enqueue_read(memory))
    answer = {"id": id, "status": EDITED if changed else UNCHANGED, "version": item.version}
    if screen.redacted:
        answer["redacted"] = [found.as_dict() for found in screen.redacted]
    return answer


def memory_versions(*, memory: Memory, id: str) -> dict:
    """An item's current text and every earlier version, oldest first."""
    memory.must_hold_items()
    item = _item(memory, id)
    with memory.readable({id: "id"}):
        versions = [
            {"version": v.version, "text": v.text, "replaced_at": v.replaced_at.isoformat(), **v.fields}
            for v in memory.item_versions(item)
        ]
    current = {"version": item.version, "text": item.text, "updated_at": item.updated_at.isoformat(), **_snapshot(item)}
    return {"id": id, "current": current, "versions": versions}


def memory_forget(
    *, memory: Memory, ids: list[str] | None = None, path: str | None = None, everything: bool = False
) -> dict:
    """Erase items by id, by path (a passage file or a directory of them), or the whole end user.

    Nothing that came only from the erased items remains (erasure.py): their versions, passages, vectors
    and facts, the term statistics they alone held, the titles they gave threads, their lines in the index,
    and Usage's last errors naming them. The answer counts what was erased.
    """
    with memory.scoped():
        memory.must_hold_items()
        if not (ids or path or everything):
            raise InvalidArguments("Say what to forget: ids, path, or all: true.", field="ids")
        # A read writing passages holds its item's row until it commits: take the rows first, so this waits
        # for it and erases what it wrote too (and a read that starts now finds its item gone).
        if everything:
            forgotten = list(memory.items().select_for_update().values_list("external_id", flat=True))
            erased = erasure.erase_end_user(memory, forgotten)
            return {"forgotten": len(forgotten), "end_user": "erased", "erased": erased}
        forgotten = sorted(_targets(memory, ids, path).values_list("external_id", flat=True))
        if not forgotten:
            raise CannotAnswer("not_found", "Nothing in this memory matches those ids or that path.")
        list(memory.items().filter(external_id__in=forgotten).select_for_update().values_list("pk", flat=True))
        erased = erasure.erase_items(memory, forgotten)
        rewrite_index(memory)
    return {"forgotten": len(forgotten), "ids": forgotten, "erased": erased}


def _targets(memory: Memory, ids: list[str] | None, path: str | None) -> QuerySet[Item]:
    """The items named by `ids`, and those with a passage at `path` (a passage file, or a directory of them)."""
    targets = memory.items().filter(external_id__in=ids) if ids else memory.items().none()
    if path:
        prefix = path.strip()
        matched = memory.passages()
        if prefix.endswith(".md"):
            matched = matched.filter(path=prefix)
        else:
            matched = matched.filter(path__prefix=prefix.rstrip("/") + "/")
        targets = targets | memory.items().filter(pk__in=matched.values("item_id"))
    return targets
