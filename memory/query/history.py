"""Reading the bi-temporal history: chains, what was true as of a day, subject files, nearest subjects.

A fact's end in world time is worked out here from the chain (a later value of a single-valued attribute,
an end marker, its own valid_to), never stored, so a retraction restores what stood before it.
"""

import difflib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from ..errors import CannotAnswer, echoed
from ..extraction.attributes import ATTRIBUTES
from ..markdown import inline
from ..models import Fact
from ..paths import iso, subject_key
from ..selectors import Memory

NEAREST_SUBJECTS = 5  # offered when a subject is not found
NEAREST_SIMILARITY = 0.5  # difflib's ratio a name must reach to be offered as nearest
CURRENT_FACTS_DEFAULT = 20  # the newest facts, when a caller names no limit


@dataclass
class Entry:
    """One value in a chain with its worked-out end."""

    fact: Fact
    until: datetime | None

    def current_at(self, moment: datetime) -> bool:
        return self.fact.valid_from <= moment and (self.until is None or moment < self.until)

    def as_dict(self, now: datetime) -> dict:
        f = self.fact
        out: dict[str, Any] = {
            "attribute": f.attribute,
            "value": f.value,
            "valid_from": iso(f.valid_from),
            "valid_to": iso(self.until),
            "stated_at": iso(f.stated_at),
            "recorded_at": iso(f.recorded_at),
            "retracted_at": iso(f.retracted_at),
            "retraction": f.retraction or None,
        }
        out["current"] = f.retracted_at is None and self.current_at(now)
        out["source"] = {
            "path": f.source_path,
            "passage_id": f.source_passage,
            "item_id": f.item.external_id if f.item is not None else None,
        }
        return out


def _visible(facts, *, said_before: datetime | None):
    return [f for f in facts if said_before is None or f.stated_at < said_before]


def work_out(facts: list[Fact], *, said_before: datetime | None = None) -> list[Entry]:
    """Chain entries for one (subject, attribute), oldest first, each with when it stopped being true.

    Only facts said before `said_before` count, and retracted facts end nothing (they are listed as they
    were, with their retraction).
    """
    facts = sorted(_visible(facts, said_before=said_before), key=lambda f: (f.valid_from, f.stated_at, f.pk))
    live = [f for f in facts if f.retracted_at is None]
    single = ATTRIBUTES[facts[0].attribute].single if facts and facts[0].attribute in ATTRIBUTES else False
    entries = []
    for fact in facts:
        if fact.kind == Fact.END:
            continue
        ends = [fact.valid_to] if fact.valid_to else []
        for other in live:
            if other.valid_from <= fact.valid_from or other.pk == fact.pk:
                continue
            same = other.value.casefold() == fact.value.casefold()
            if other.kind == Fact.END and (not other.value or same):
                ends.append(other.valid_from)
            elif single and other.kind != Fact.END and not same:
                ends.append(other.valid_from)
        entries.append(Entry(fact, min(ends) if ends else None))
    return entries


def _facts(memory: Memory, key: str, attribute: str | None = None):
    facts = memory.facts().filter(subject_key=key).select_related("item")
    return facts.filter(attribute=attribute) if attribute else facts


def chains(memory: Memory, key: str, attribute: str | None = None, *, said_before=None) -> dict[str, list[Entry]]:
    """attribute -> its chain for the subject `key` (one attribute, when given), in attribute order."""
    by_attribute: dict[str, list[Fact]] = {}
    for fact in _facts(memory, key, attribute):
        by_attribute.setdefault(fact.attribute, []).append(fact)
    return {name: work_out(facts, said_before=said_before) for name, facts in sorted(by_attribute.items())}


def resolve_subject(memory: Memory, subject: str) -> tuple[str, str]:
    """(key, name) of a recorded subject, by exact name, or by a unique first or last name."""
    known = memory.subjects()
    key = subject_key(subject)
    if key in known:
        return key, known[key]
    partial = [k for k in known if key in k.split()]
    if len(partial) == 1:
        return partial[0], known[partial[0]]
    nearest = (
        difflib.get_close_matches(key, list(known), n=NEAREST_SUBJECTS, cutoff=NEAREST_SIMILARITY)
        or partial[:NEAREST_SUBJECTS]
    )
    raise CannotAnswer(
        "no_subject",
        f"No facts are recorded about {echoed(subject)}.",
        subject=subject,
        nearest=[known[k] for k in nearest],
    )


def memory_history(*, memory: Memory, subject: str, attribute: str | None = None) -> dict:
    """The chain for one subject, oldest first: value, valid from/to, recorded and retracted, source."""
    memory.must_hold_items()
    key, name = resolve_subject(memory, subject)
    found = chains(memory, key, attribute)
    if not found:
        raise CannotAnswer(
            "no_attribute",
            f"Nothing is recorded about {name}'s {echoed(attribute or '')}.",
            subject=name,
            attributes=sorted({f.attribute for f in _facts(memory, key)}),
        )
    now = timezone.now()
    chain = sorted(
        (e.as_dict(now) for entries in found.values() for e in entries),
        key=lambda e: (e["valid_from"], e["recorded_at"]),
    )
    return {"subject": name, "attribute": attribute, "chain": chain}


def current_facts(
    memory: Memory, *, named=None, sources=None, as_of: datetime | None = None, limit: int = CURRENT_FACTS_DEFAULT
) -> list[dict]:
    """What was true as of `as_of` (default now), using only what was said before it: about the subjects
    whose names hold one of the words `named` and those the passages at `sources` speak of, or about
    everyone when neither is given."""
    moment = as_of or timezone.now()
    facts: list[Fact] | QuerySet[Fact]
    if named is not None or sources is not None:
        facts = memory.facts_about(sorted(named or []), sorted(sources or []))
    else:
        facts = memory.facts()
    grouped: dict[tuple, list[Fact]] = {}
    for fact in facts:
        grouped.setdefault((fact.subject_key, fact.attribute), []).append(fact)
    out = []
    for (_, attribute), group in grouped.items():
        for entry in work_out(group, said_before=as_of):
            f = entry.fact
            if f.retracted_at is None and entry.current_at(moment):
                out.append(
                    {
                        "subject": f.subject,
                        "attribute": attribute,
                        "value": f.value,
                        "since": iso(f.valid_from),
                        "until": iso(entry.until),
                        "said_at": iso(f.stated_at),
                        "source": f.source_path,
                        "passage_id": f.source_passage,
                    }
                )
    out.sort(key=lambda r: r["since"], reverse=True)
    return out[:limit]


def render_subject(memory: Memory, key: str, name: str) -> str:
    """subjects/<name>.md: current facts, then each attribute's history."""
    now = timezone.now()
    found = chains(memory, key)
    # Names, attributes and values are stored data: inline() keeps each on its line, starting no block.
    lines = [f"# {inline(name)}", "", "## Now"]
    for attribute, entries in found.items():
        for e in entries:
            if e.fact.retracted_at is None and e.current_at(now):
                lines.append(
                    f"- {inline(attribute)}: {inline(e.fact.value)} (since {e.fact.valid_from.date()}; "
                    f"{e.fact.source_passage or 'source forgotten'})"
                )
    lines += ["", "## History"]
    for attribute, entries in found.items():
        lines.append(f"### {inline(attribute)}")
        for e in entries:
            span = f"{e.fact.valid_from.date()} to {e.until.date() if e.until else 'now'}"
            status = f", retracted {e.fact.retracted_at.date()} ({e.fact.retraction})" if e.fact.retracted_at else ""
            value = inline(e.fact.value) or "(forgotten)"
            lines.append(f"- {value}: {span}; recorded {e.fact.recorded_at.date()}{status}")
    return "\n".join(lines) + "\n"
