"""The import: a file of docs/export-format.md put into one end user's memory, in two passes.

The first pass reads every line and checks it (format.check_line: each item as memory_add checks it; then
checks.check_fits: what the second pass writes fits its columns, and no moment lies ahead), so bad lines are
refused by number and field before anything is stored. The second stores the items
IMPORT_BATCH to a transaction, through services.store_items, the path memory_add stores by (whatever it
checks holds here too), keeping each item's id: importing the same file again leaves every item unchanged.
An item added here gets its version number, earlier versions and facts as the file gives them, times
included; its background read then rebuilds passages, vectors and statistics and, when the file says its
read was done, places the facts it brought rather than extract them again (read/facts.py).
"""

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO, NamedTuple

from django.utils import timezone

from memory.routes.answers import ADDED, REFUSED
from memory.secrets.gate import redacts, screen_record

from .. import fairness, services
from ..limits import IMPORT_BATCH, IMPORT_CLOCK_SKEW, IMPORT_MAX_ITEMS, IMPORT_REFUSED_LINES, ITEMS_MAX
from ..models import Fact, ItemVersion
from ..paths import subject_key
from ..selectors import Memory
from . import checks, reader
from . import format as fmt

# store_items places a field as in a memory_add call (items[3].text); in a file it is the line's item.
CALL_PLACE, LINE_PLACE = re.compile(r"^items\[\d+\]\."), "item."
ID_DIGEST_BYTES = 16  # what the first pass keeps of each id to find a repeated one: 128 bits, no collision
Checked = Callable[[int], None]  # the first pass's progress: item lines checked so far
# The second pass's, inside each batch's transaction: item lines stored so far, and the keys of the items
# this batch added (what an undo erases).
Stored = Callable[[int, list[int]], None]


class FileSize(NamedTuple):
    """What a checked file holds: its items, and the characters of their texts (what their read will take)."""

    items: int
    characters: int


def _item_lines(file: BinaryIO) -> Iterator[fmt.ImportLine]:
    """The file's item lines, checked as format.check_line checks them, after its checked first line."""
    lines = reader.lines(file)
    _header(lines)
    for number, line in lines:
        yield fmt.check_line(reader.parsed(number, line), number)


def check_file(file: BinaryIO, *, project_id: int, redact: bool = False, progress: Checked | None = None) -> FileSize:
    """The first pass: every line checked (`redact`: the project stores secrets redacted, so a fact's strings
    must fit their columns once redacted), no id named twice, as many item lines as the first line counts (a
    file cut short is refused), and room for them all in the project's cap on queued read work: a file larger
    than the whole cap is refused at the line that passes it (fairness.LargerThanBacklog, 413: it never fits),
    one that fits the cap but not beside what already waits as memory_add is refused
    (fairness.ReadBacklogFull, 429: it fits once the workers have read). Returns what the file holds.

    A bad line does not stop the pass: it names up to IMPORT_REFUSED_LINES of them (format.refused_lines).
    What stops the file being read on (a corrupt gzip, a bound on the whole file) refuses it at once, with
    the bad lines found before."""
    latest = timezone.now() + IMPORT_CLOCK_SKEW
    seen: set[bytes] = set()
    refusals: list[fmt.InvalidImport] = []
    count = characters = 0
    more = False
    try:
        lines = reader.lines(file)
        header_line, header = _header(lines)
        for number, raw in lines:
            count += 1
            try:
                line = _checked(number, raw, seen, redact=redact, latest=latest)
            except fmt.InvalidImport as bad:
                more = len(refusals) == IMPORT_REFUSED_LINES
                if more:
                    break
                refusals.append(bad)
                continue
            characters += len(line.item["text"])
            if len(seen) > IMPORT_MAX_ITEMS:
                raise fmt.InvalidImport(
                    number, "items", f"a file holds at most {IMPORT_MAX_ITEMS:,} items", bound=IMPORT_MAX_ITEMS
                )
            fairness.check_fits_cap(len(seen), characters)
            if progress:
                progress(count)
    except fmt.InvalidImport as stopped:
        raise fmt.refused_lines([*refusals, stopped], more=False) from None
    promised = header.get("items")
    if promised is not None and promised != count and not more:
        refusals.append(
            fmt.InvalidImport(
                header_line,
                "items",
                f"items: the first line counts {promised:,} items and the file holds {count:,}: it was cut short "
                "or changed",
            )
        )
    if refusals:
        raise fmt.refused_lines(refusals, more=more)
    fairness.check_backlog(project_id, len(seen), characters)
    return FileSize(len(seen), characters)


def _header(lines: Iterator[tuple[int, bytes]]) -> tuple[int, dict]:
    """The file's first line: its number and its value, checked."""
    first = next(lines, None)
    if first is None:
        raise fmt.InvalidImport(
            1, "format", f"format: the file is empty; its first line names the format, {fmt.FORMAT!r}"
        )
    return first[0], fmt.check_header(reader.parsed(*first), first[0])


def _checked(number: int, raw: bytes, seen: set[bytes], *, redact: bool, latest) -> fmt.ImportLine:
    """One item line checked whole, its id added to `seen` (as a digest) unless an earlier line's."""
    line = fmt.check_line(reader.parsed(number, raw), number)
    checks.check_fits(line, redact=redact, latest=latest)
    digest = hashlib.blake2b(line.id.encode(), digest_size=ID_DIGEST_BYTES).digest()
    if digest in seen:
        raise fmt.InvalidImport(number, "item.id", "item.id: repeats an earlier line's; a file holds each item once")
    seen.add(digest)
    return line


def store_file(
    *, memory: Memory, file: BinaryIO, size: FileSize, redact: bool | None = None, stored: Stored | None = None
) -> dict:
    """The second pass, once check_file has passed the file (and measured its `size`) with the same `redact`
    (by default, the project's policy now): its items put into the memory, IMPORT_BATCH to a transaction, each
    batch's transaction also telling `stored` how far it is and what it added. Answers how many items, by
    memory_add's status, each item refused and each field redacted for a secret (by line and field: Caught),
    how many versions and facts came with the added ones, and how many secrets the gate caught in all
    (secrets_caught: those items and fields, and the versions and facts it redacted or left out); their read
    runs in the background.

    The end user may be made between the passes, so a refused file leaves no empty end user behind."""
    tally = _Tally(redacts(memory) if redact is None else redact)
    batch: list[fmt.ImportLine] = []
    done = 0
    for line in _item_lines(file):
        batch.append(line)
        if len(batch) == IMPORT_BATCH:
            done = _store_batch(memory, batch, tally, done, stored)
            batch = []
    if batch:
        _store_batch(memory, batch, tally, done, stored)
    statuses, brought, caught = tally.statuses, tally.brought, tally.caught
    with memory.scoped():
        unread = memory.items().filter(read_at__isnull=True).count()
    return {
        "items": size.items,
        "statuses": dict(statuses),
        "refused": caught.refused,
        "redacted": caught.redacted,
        "versions": brought["versions"],
        "facts": brought["facts"],
        "secrets_caught": len(caught.refused) + len(caught.redacted) + brought["secrets"],
        "unread_items": unread,
        "message": "Stored. The background read rebuilds passages, vectors and the index; memory_overview's "
        "unread_items counts the items it has still to read.",
    }


@dataclass
class Caught:
    """Where the secret gate caught an item's secret, by its place in the file: each refused item, and each
    field stored redacted, as {"line", "field", "secret"} (the field within the line, such as item.text),
    never the secret."""

    refused: list[dict] = field(default_factory=list)
    redacted: list[dict] = field(default_factory=list)

    def add(self, line: fmt.ImportLine, answer: dict) -> None:
        """What store_items answered for this line's item: its field places are a memory_add call's."""
        if answer["status"] == REFUSED:
            self.refused.append(_in_file(line, answer))
        self.redacted.extend(_in_file(line, found) for found in answer.get("redacted", ()))


def _in_file(line: fmt.ImportLine, found: dict) -> dict:
    return {"line": line.number, "field": CALL_PLACE.sub(LINE_PLACE, found["field"]), "secret": found["secret"]}


@dataclass
class _Tally:
    """The second pass's counts so far, and the secret policy it stores by."""

    redact: bool
    statuses: Counter[str] = field(default_factory=Counter)
    brought: Counter[str] = field(default_factory=Counter)
    caught: Caught = field(default_factory=Caught)


def _store_batch(memory: Memory, batch: list[fmt.ImportLine], tally: _Tally, done: int, stored: Stored | None) -> int:
    """One transaction: the batch's items stored as memory_add stores them (no more than a memory_add's
    worth of items per call, so each queued read is no bigger than an add's), then the versions and facts
    of the items it added, then `stored` told. Returns the item lines stored so far."""
    with memory.scoped():
        answers = []
        for start in range(0, len(batch), ITEMS_MAX):
            answers += services.store_items(
                memory=memory, items=[line.item for line in batch[start : start + ITEMS_MAX]]
            )
        tally.statuses.update(answer["status"] for answer in answers)
        for line, answer in zip(batch, answers, strict=True):
            tally.caught.add(line, answer)
        added = {answer["id"] for answer in answers if answer["status"] == ADDED}
        lines = [line for line in batch if line.id in added]
        pks: list[int] = []
        if lines:
            versions, facts, secrets, pks = _bring(memory, lines, redact=tally.redact)
            tally.brought.update(versions=versions, facts=facts, secrets=secrets)
        if stored:
            stored(done + len(batch), pks)
    return done + len(batch)


def _bring(memory: Memory, lines: list[fmt.ImportLine], *, redact: bool) -> tuple[int, int, int, list[int]]:
    """Give items just added their version numbers, earlier versions and facts, as the file has them. Each
    earlier version and fact passes the secret gate as an item does: redacted, or left out when the project
    refuses secrets. Returns how many versions and facts were brought, how many the gate caught, and the
    added items' keys."""
    items = {item.external_id: item for item in memory.items().filter(external_id__in=[line.id for line in lines])}
    numbered: dict[tuple[int, int], list[int]] = {}  # (version, facts_imported_version) -> item pks
    versions, facts, caught = [], [], 0
    for line in lines:
        item = items[line.id]
        # the read of this version places the facts brought rather than extract them (read/facts.py)
        numbered.setdefault((line.version, line.version if line.read else 0), []).append(item.pk)
        for version in line.versions:
            screened = screen_record(version, redact=redact)
            caught += screened is not version
            versions += [ItemVersion(item=item, **screened)] if screened else []
        for fact in line.facts:
            screened = screen_record(fact, redact=redact)
            caught += screened is not fact
            facts += (
                [Fact(end_user=memory.end_user, item=item, subject_key=subject_key(screened["subject"]), **screened)]
                if screened
                else []
            )
    # one UPDATE per pair of numbers (most items share one): bulk_update's CASE per row grows as n squared
    for (number, imported), pks in numbered.items():
        memory.items().filter(pk__in=pks).update(version=number, facts_imported_version=imported)
    ItemVersion.objects.bulk_create(versions)
    Fact.objects.bulk_create(facts)
    return len(versions), len(facts), caught, [item.pk for item in items.values()]
