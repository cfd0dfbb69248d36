"""Writes on memory: add (and edit by id), correct, forget. Reads are in query/."""

import time
import uuid

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from .read import stats
from .errors import CannotAnswer, InvalidArguments
from .limits import ADD_ATTEMPTS, DEFAULT_KIND, WAIT_SECONDS
from .models import Item, ItemVersion, Passage
from .selectors import Memory
from .validation import parse_date

# The fields an item keeps besides its text; an edit that changes none of them (nor the text) is "unchanged".
ITEM_FIELDS = ("kind", "at", "author", "role", "session", "title", "about", "expires", "metadata")


def _incoming(raw: dict, existing: Item | None) -> dict:
    """An item's stored fields from a validated request item; an edit keeps what it does not resend."""
    fields = {"text": raw["text"]}
    for name in ITEM_FIELDS:
        if name in raw:
            value = raw[name]
            fields[name] = parse_date(value, name) if name in ("at", "expires") else value
        elif existing is not None:
            fields[name] = getattr(existing, name)
        else:
            fields[name] = {"kind": DEFAULT_KIND, "at": timezone.now(), "expires": None, "metadata": {}}.get(
                name, ""
            )
    return fields


def _snapshot(item: Item) -> dict:
    return {
        name: (value.isoformat() if hasattr(value, "isoformat") else value)
        for name in ITEM_FIELDS
        if (value := getattr(item, name)) is not None
    }


def _edit(item: Item, fields: dict) -> bool:
    """Apply `fields` to `item`, keeping its earlier text as a version. False when nothing changed."""
    if all(getattr(item, name) == value for name, value in fields.items()):
        return False
    ItemVersion.objects.create(item=item, version=item.version, text=item.text, fields=_snapshot(item))
    for name, value in fields.items():
        setattr(item, name, value)
    item.version += 1
    item.read_at = None
    item.save()
    return True


def memory_add(*, memory: Memory, items: list[dict], wait: bool = False) -> dict:
    """Store `items` durably in one transaction, then queue their background read.

    An item whose id exists is edited (its earlier text kept as a version) or, when identical, left
    unchanged. With `wait`, answers once every item is searchable, or after WAIT_SECONDS saying so.
    """
    for attempt in range(1, ADD_ATTEMPTS + 1):
        try:
            results = _store(memory, items)
            break
        except IntegrityError:
            # A call adding the same new id at the same moment inserted it first: store again, finding the
            # row now, so this call edits it (or leaves it unchanged) and every call gets a definite answer.
            if attempt == ADD_ATTEMPTS:
                raise
    pks = [r.pop("pk") for r in results]
    deadline = time.monotonic() + (WAIT_SECONDS if wait else 0)
    while True:
        read = set(memory.items().filter(pk__in=pks, read_version=F("version")).values_list("pk", flat=True))
        if len(read) == len(pks) or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    for result, pk in zip(results, pks):
        result["searchable"] = pk in read
    answer = {"items": results, "searchable": len(read) == len(pks)}
    if wait and not answer["searchable"]:
        answer["message"] = (
            f"Stored; not every item was searchable after {WAIT_SECONDS} s. The background read will finish them."
        )
    return answer


def _store(memory: Memory, items: list[dict]) -> list[dict]:
    """Store `items` in one transaction and queue their read on commit; each result carries the item's pk."""
    results, to_read = [], []
    with transaction.atomic():
        ids = [raw.get("id") for raw in items if raw.get("id")]
        existing = {
            item.external_id: item for item in memory.items().select_for_update().filter(external_id__in=ids)
        }
        for raw in items:
            external_id = raw.get("id") or f"it_{uuid.uuid4().hex[:16]}"
            item = existing.get(external_id)
            fields = _incoming(raw, item)
            if item is None:
                item = Item.objects.create(end_user=memory.end_user, external_id=external_id, **fields)
                status = "added"
            else:
                status = "edited" if _edit(item, fields) else "unchanged"
            if not item.is_read:
                to_read.append(item.pk)
            results.append({"id": external_id, "status": status, "pk": item.pk})
        memory.end_user.last_active_at = timezone.now()
        memory.end_user.save(update_fields=["last_active_at"])
        if to_read:
            transaction.on_commit(lambda: enqueue_read(to_read))
    return results


def enqueue_read(item_pks: list[int]) -> None:
    """Queue the read. If the broker is down the items stay stored and unread; the sweep finds them."""
    from .tasks import read_items

    try:
        read_items.apply_async(args=[item_pks], retry=False)
    except Exception:  # noqa: BLE001 - a broker outage must not fail an add that is already stored
        import logging

        logging.getLogger(__name__).warning("Could not queue the read of %d items; the sweep will.", len(item_pks))


def _item(memory: Memory, external_id: str) -> Item:
    item = memory.items().filter(external_id=external_id).first()
    if item is None:
        raise CannotAnswer("not_found", f"No item with id {external_id!r} in this memory.")
    return item


def memory_correct(*, memory: Memory, id: str, text: str) -> dict:
    """Fix an item's text, keeping the old text as a version; the item is read again."""
    with transaction.atomic():
        item = _item(memory, id)
        item = Item.objects.select_for_update().get(pk=item.pk)
        changed = _edit(item, {"text": text})
        if changed:
            transaction.on_commit(lambda: enqueue_read([item.pk]))
    return {"id": id, "status": "edited" if changed else "unchanged", "version": item.version}


def memory_versions(*, memory: Memory, id: str) -> dict:
    """An item's current text and every earlier version, oldest first."""
    item = _item(memory, id)
    versions = [
        {"version": v.version, "text": v.text, "replaced_at": v.replaced_at.isoformat(), **v.fields}
        for v in item.versions.all()
    ]
    current = {"version": item.version, "text": item.text, "updated_at": item.updated_at.isoformat(),
               **_snapshot(item)}
    return {"id": id, "current": current, "versions": versions}


def memory_forget(*, memory: Memory, ids: list[str] | None = None, path: str | None = None,
                  everything: bool = False) -> dict:
    """Erase items by id, by path (a passage file or a directory of them), or the whole end user.

    Everything derived from the erased items (passages, embeddings, the index's lines) goes with them.
    """
    from .read.facts import forget_facts
    from .read.written_index import rewrite_index

    if not (ids or path or everything):
        raise InvalidArguments("Say what to forget: ids, path, or all: true.", field="ids")
    with transaction.atomic():
        # A read writing passages holds its item's row until it commits: take the rows first, so this waits
        # for it and erases what it wrote too (and a read that starts now finds its item gone).
        if everything:
            count = len(memory.items().select_for_update().values_list("pk", flat=True))
            memory.end_user.delete()
            return {"forgotten": count, "end_user": "erased"}
        targets = memory.items().none()
        if ids:
            targets = memory.items().filter(external_id__in=ids)
        if path:
            prefix = path.strip()
            matched = Passage.objects.filter(end_user=memory.end_user)
            matched = matched.filter(path=prefix) if prefix.endswith(".md") else matched.filter(
                path__startswith=prefix.rstrip("/") + "/"
            )
            targets = targets | memory.items().filter(pk__in=matched.values("item_id"))
        forgotten = sorted(targets.values_list("external_id", flat=True))
        if not forgotten:
            raise CannotAnswer("not_found", "Nothing in this memory matches those ids or that path.")
        erased = memory.items().filter(external_id__in=forgotten)
        list(erased.select_for_update().values_list("pk", flat=True))  # wait for a read of them (as above)
        forget_facts(erased)
        stats.uncount_passages(memory.end_user.pk, list(Passage.objects.filter(item__in=erased).values_list("pk", flat=True)))
        erased.delete()
    rewrite_index(memory)
    return {"forgotten": len(forgotten), "ids": forgotten}
