"""Recording facts: what the read extracts from an item, and retracting them on edit, correction or forget."""

from datetime import UTC, date, datetime, time

from django.utils import timezone

from .. import llm
from ..extraction.attributes import ATTRIBUTES
from ..extraction.attributes import Fact as ExtractedFact
from ..extraction.extractor import extract
from ..models import Fact, Item, Passage
from ..paths import passage_id, subject_key
from ..selectors import Memory

FORGOTTEN = "forgotten"  # how earlier forgets marked the facts they emptied (now they are deleted)
CORRECTED = "corrected"  # a value a later item withdrew ("Actually, I live in Braga, not Porto")
EVIDENCE_PREFIX = 80  # characters of a fact's sentence that find its passage (a long sentence may be cut)


def _moment(value: date | datetime | None, default: datetime) -> datetime:
    if value is None:
        return default
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.combine(value, time(), tzinfo=UTC)


def fact_extractor():
    """The rule-based extractor, or the model's when one is configured."""
    return llm.extract_facts if llm.configured() else extract


def _source(fact: ExtractedFact, passages: list[Passage]) -> Passage | None:
    for passage in passages:
        if fact.evidence and fact.evidence[:EVIDENCE_PREFIX] in passage.text:
            return passage
    return passages[0] if passages else None


def record_facts(memory: Memory, item: Item, passages: list[Passage]) -> int:
    """Retract what the item's earlier text said, then record what its current text says.

    An imported item's facts came with it (memory/portability/): they are placed in its new passages, and
    nothing is extracted or retracted.
    """
    if item.has_imported_facts:
        return place_imported_facts(memory, item, passages)
    now = timezone.now()
    # What the item's earlier text said goes; an item never read and never imported with facts has none.
    if item.read_version or item.facts_imported_version:
        memory.facts().filter(item=item, retracted_at__isnull=True).update(retracted_at=now, retraction="edited")
    found = fact_extractor()(item.text, author=item.author or None, at=item.at, end_user=memory.end_user.external_id)
    rows = []
    for fact in found:
        single = ATTRIBUTES.get(fact.attribute)
        if single is None:
            continue
        if fact.correction and single.single:
            _retract_corrected(memory, item, fact, now)
        source = _source(fact, passages)
        valid_from = _moment(fact.valid_from, item.at)
        if fact.ended:
            kind, valid_from = Fact.END, _moment(fact.valid_to, item.at)
            valid_to = None
        else:
            kind, valid_to = "value", _moment(fact.valid_to, item.at) if fact.valid_to else item.expires
        rows.append(
            Fact(
                end_user=memory.end_user,
                item=item,
                subject=fact.subject,
                subject_key=subject_key(fact.subject),
                attribute=fact.attribute,
                value=fact.value,
                kind=kind,
                valid_from=valid_from,
                valid_to=valid_to,
                stated_at=item.at,
                source_path=source.path if source else "",
                source_passage=passage_id(source.thread.tid, source.seq) if source else "",
                evidence=fact.evidence,
                source_seq=passages.index(source) + 1 if source else None,
            )
        )
    Fact.objects.bulk_create(rows)
    return len(rows)


def place_imported_facts(memory: Memory, item: Item, passages: list[Passage]) -> int:
    """Point an imported item's facts at its passages, just rebuilt in order: a fact's `source_seq` is its
    passage's place among them. A place past the last (a retracted fact of an earlier, longer text) leaves
    the fact without a passage. Returns how many facts were placed."""
    facts = list(memory.facts().filter(item=item, source_seq__isnull=False))
    for fact in facts:
        assert fact.source_seq is not None  # filtered above
        source = passages[fact.source_seq - 1] if fact.source_seq <= len(passages) else None
        fact.source_path = source.path if source else ""
        fact.source_passage = passage_id(source.thread.tid, source.seq) if source else ""
    Fact.objects.bulk_update(facts, ["source_path", "source_passage"])
    return len(facts)


def _retract_corrected(memory: Memory, item: Item, fact: ExtractedFact, now: datetime) -> None:
    """'Actually, I live in Braga, not Porto': the value said before this is withdrawn, not ended."""
    earlier = (
        memory.facts()
        .filter(
            subject_key=subject_key(fact.subject),
            attribute=fact.attribute,
            kind="value",
            retracted_at__isnull=True,
            stated_at__lte=item.at,
        )
        .exclude(item=item)
        .exclude(value__iexact=fact.value)
        .order_by("-valid_from")
        .first()
    )
    if earlier:
        earlier.retracted_at, earlier.retraction, earlier.retracted_by = now, CORRECTED, item
        earlier.save(update_fields=["retracted_at", "retraction", "retracted_by"])


def forget_facts(memory: Memory, items) -> int:
    """Delete the facts whose source is among the forgotten items, subject names and all: nothing of them
    remains, not even that something was unlearned; a value one of them corrected stands again. Facts a
    forget before this one emptied and kept (their source gone, their value blank) go too. Returns how many
    facts were deleted."""
    memory.facts().filter(retracted_by__in=items, retraction=CORRECTED).update(
        retracted_at=None, retraction="", retracted_by=None
    )
    emptied = memory.facts().filter(item__isnull=True, retraction=FORGOTTEN)
    deleted, _ = (memory.facts().filter(item__in=items) | emptied).delete()
    return deleted
