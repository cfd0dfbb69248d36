"""Recording facts: what the read extracts from an item, and retracting them on edit, correction or forget."""

from datetime import UTC, date, datetime, time

from django.conf import settings
from django.utils import timezone

from ..extraction.attributes import ATTRIBUTES, Fact as ExtractedFact
from ..extraction.extractor import extract
from ..models import Fact, Item, Passage


def subject_key(subject: str) -> str:
    return " ".join(subject.split()).casefold()


def _moment(value: date | datetime | None, default: datetime) -> datetime:
    if value is None:
        return default
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.combine(value, time(), tzinfo=UTC)


def fact_extractor():
    """The rule-based extractor, or the model's when one is configured."""
    if settings.LLM_BASE_URL and settings.LLM_API_KEY:
        from ..llm import extract_facts

        return extract_facts
    return extract


def _source(fact: ExtractedFact, passages: list[Passage]) -> Passage | None:
    for passage in passages:
        if fact.evidence and fact.evidence[:80] in passage.text:
            return passage
    return passages[0] if passages else None


def record_facts(item: Item, passages: list[Passage]) -> int:
    """Retract what the item's earlier text said, then record what its current text says."""
    now = timezone.now()
    Fact.objects.filter(item=item, retracted_at__isnull=True).update(retracted_at=now, retraction="edited")
    found = fact_extractor()(item.text, author=item.author or None, at=item.at, end_user=item.end_user.external_id)
    rows = []
    for fact in found:
        single = ATTRIBUTES.get(fact.attribute)
        if single is None:
            continue
        if fact.correction and single.single:
            _retract_corrected(item, fact, now)
        source = _source(fact, passages)
        valid_from = _moment(fact.valid_from, item.at)
        if fact.ended:
            kind, valid_from = Fact.END, _moment(fact.valid_to, item.at)
            valid_to = None
        else:
            kind, valid_to = "value", _moment(fact.valid_to, None) if fact.valid_to else item.expires
        rows.append(Fact(
            end_user_id=item.end_user_id, item=item, subject=fact.subject, subject_key=subject_key(fact.subject),
            attribute=fact.attribute, value=fact.value, kind=kind, valid_from=valid_from, valid_to=valid_to,
            stated_at=item.at, source_path=source.path if source else "",
            source_passage=f"{source.thread.tid}/p_{source.seq:04d}" if source else "", evidence=fact.evidence,
        ))
    Fact.objects.bulk_create(rows)
    return len(rows)


def _retract_corrected(item: Item, fact: ExtractedFact, now: datetime) -> None:
    """'Actually, I live in Braga, not Porto': the value said before this is withdrawn, not ended."""
    earlier = (Fact.objects.filter(end_user_id=item.end_user_id, subject_key=subject_key(fact.subject),
                                   attribute=fact.attribute, kind="value", retracted_at__isnull=True,
                                   stated_at__lte=item.at)
               .exclude(item=item).exclude(value__iexact=fact.value).order_by("-valid_from").first())
    if earlier:
        earlier.retracted_at, earlier.retraction = now, "corrected"
        earlier.save(update_fields=["retracted_at", "retraction"])


def forget_facts(items) -> None:
    """Facts from forgotten items are retracted and emptied: history shows that something was unlearned,
    never what."""
    facts = Fact.objects.filter(item__in=items)
    facts.filter(retracted_at__isnull=True).update(retracted_at=timezone.now(), retraction="forgotten")
    facts.update(value="", evidence="", source_path="", source_passage="", item=None)
