"""What memory_recall keeps for a question, worked out in Python: records, worked-out lines, and `enough`.

Records are dated facts (the bi-temporal history as of the day asked) and dated events (items whose metadata
names an action). Worked-out lines are computed from them, each showing its inputs: how long before the day
asked, how many, which came first. `enough` is a logistic function of retrieval strength and coverage,
fitted on LoCoMo (bench/recall_enough.py measures how well it separates answerable questions from not).
"""

import math
import re
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.postgres.fields import ArrayField
from django.db.models import CharField, F, Func
from django.utils import timezone

from ..paths import iso
from ..query import retrieval, search
from ..selectors import Memory
from .events import CHAT, authors, events, passages_of

HITS = 10
COVER_TOP = 5  # passages whose words count as covering the question
# Fitted by bench/recall_enough.py --fit on LoCoMo (categories 1-4 answerable, 5 not): bench/README.md
# "memory_recall's `enough`".
# Only features whose direction holds on any memory: more of the question covered, by the person it names,
# more strongly ranked, with facts: more likely answerable. (On LoCoMo a lower vector similarity also fits as
# "answerable", an artefact of adversarial questions reusing real ones' words; it is left out.)
WEIGHTS = {"cover_one": -0.187, "person_cover": 1.038, "other_lead": -2.401, "top": 0.204, "facts": 0.352}
BIAS = -2.084
# `top` was fitted on search scores whose weights summed to 16.125; bench/tune.py refits search's weights, so
# the top score is read on that scale whatever their sum (ranking does not depend on it, `enough` does).
TOP_SCALE = 16.125
STEM_MIN = 4  # an action's stem shorter than this ("pr", "ci") would match too many of a question's words
NAME_PART_MIN = 3  # a part of a person's name this long counts as naming them ("Al" of "Al Jones" does not)
LINE_CHARS = 80  # of an undated passage's text, standing in for a record's line
UNDATED_HITS = 2  # with no dated record, the top passages stand in: two, what "which came first" compares
COUNT_CITES = 5  # a count cites its latest events, this many: enough to check it, short enough to read
# z beyond this is 0 or 1 to 13 digits, and math.exp overflows far past it (~709): clamped, never raises.
LOGIT_BOUND = 30.0
_WORD = re.compile(r"[\w'-]+")
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?\b")
HOW_LONG = re.compile(r"\b(how long|how many (?:days|weeks|months|years)|when|ago|since|last time)\b", re.I)
HOW_MANY = re.compile(r"\b(how many|how often|number of|count)\b", re.I)
WHICH_FIRST = re.compile(r"\b(first|earlier|before or after|which came|sooner|or later)\b", re.I)


@dataclass
class Kept:
    """What one question kept from memory."""

    question: str
    as_of: datetime | None
    hits: list = field(default_factory=list)  # (score, Passage), best first
    facts: list = field(default_factory=list)  # history.current_facts rows
    records: list = field(default_factory=list)
    worked_out: list = field(default_factory=list)


def _day(value) -> str:
    return (value if isinstance(value, str) else iso(value) or "")[:10]


def records(memory: Memory, kept: Kept) -> list[dict]:
    """Dated facts, then the dated events among the top passages, each with its address."""
    out = [
        {
            "kind": "fact",
            "at": f["since"],
            "subject": f["subject"],
            "attribute": f["attribute"],
            "value": f["value"],
            "until": f["until"],
            "passage_id": f["passage_id"],
            "path": f["source"],
            "line": f"{_day(f['since'])} {f['subject']} {f['attribute'].replace('_', ' ')}: {f['value']}"
            + (f" (until {_day(f['until'])})" if f["until"] else ""),
        }
        for f in kept.facts
    ]
    items = {p.item_id: p for _, p in reversed(kept.hits)}  # an item's best-ranked passage
    found = {e.pk: e for e in events(memory, queryset=memory.items().filter(pk__in=list(items)))}
    for pk in dict.fromkeys(p.item_id for _, p in kept.hits):  # in the order of the ranking
        e, p = found.get(pk), items[pk]
        if e is None or e.action in (CHAT, "note", "document"):
            continue
        where = f" on {e.surface}" if e.surface else ""
        outcome = f" ({e.outcome})" if e.outcome else ""
        out.append(
            {
                "kind": "event",
                "at": iso(e.at),
                "who": e.author,
                "action": e.action,
                "surface": e.surface,
                "outcome": e.outcome,
                "thread": e.thread,
                "passage_id": p.passage_id,
                "path": p.path,
                "line": f"{_day(e.at)} {e.author or 'someone'} {e.action}{where}{outcome}",
            }
        )
    return out


def _named_actions(question: str, actions: set[str]) -> list[str]:
    """The actions a question speaks of: 'deploys', 'deployed' -> deploy; 'incidents' -> incident_open."""
    words = {w.casefold() for w in _WORD.findall(question)}
    named: list[str] = []
    for action in sorted(actions, key=len):
        stem = action.split("_")[0]
        if len(stem) >= STEM_MIN and any(w.startswith(stem[: max(STEM_MIN, len(stem) - 1)]) for w in words):
            if not any(a.split("_")[0] == stem for a in named):
                named.append(action)
    return named


def _label(record: dict) -> str:
    thread = f"{record['thread']}: " if record.get("thread") else ""
    return f"{thread}{record['line']}"


def _two_things(question: str, dated: list[dict]) -> list[dict]:
    """The two records a "which came first" compares: those whose thread the question names (INC-101, a
    PR), else the best-ranked record and the best one from another thread."""
    q = question.casefold()
    named: dict[str, dict] = {}
    for r in dated:
        if r.get("thread") and r["thread"].casefold() in q:
            named.setdefault(r["thread"], r)
    if len(named) >= 2:
        return list(named.values())[:2]
    first = dated[0] if dated else None
    other = next(
        (
            r
            for r in dated[1:]
            if first and r.get("thread", r["passage_id"]) != first.get("thread", first["passage_id"])
        ),
        None,
    )
    return [first, other] if first and other else []  # another is found only beside a first


def work_out(memory: Memory, kept: Kept) -> list[dict]:
    """How long before the day asked, how many, which came first: each line with its inputs."""
    q, moment = kept.question, kept.as_of or timezone.now()
    lines: list[dict] = []
    dated = [r for r in kept.records if r.get("at")] or [
        {"at": iso(p.at), "passage_id": p.passage_id, "line": p.text[:LINE_CHARS]} for _, p in kept.hits[:UNDATED_HITS]
    ]
    named = _named_actions(q, {r["action"] for r in dated if r.get("action")})
    if HOW_LONG.search(q) and dated:
        r = next((r for r in dated if r.get("action") in named), dated[0])
        days = (moment.date() - datetime.fromisoformat(r["at"]).date()).days
        lines.append(
            {
                "kind": "days_before",
                "value": days,
                "inputs": [{"at": r["at"], "passage_id": r["passage_id"]}],
                "as_of": _day(moment),
                "line": f"{r['line']}: {days} days before {_day(moment)}",
            }
        )
    if HOW_MANY.search(q):
        people = [
            name for name in authors(memory) if any(part in q for part in name.split() if len(part) >= NAME_PART_MIN)
        ]
        everything = events(memory, before=kept.as_of)
        for action in _named_actions(q, {e.action for e in everything} - {CHAT}):
            found = [e for e in everything if e.action == action and (not people or e.author in people)]
            cites = passages_of(memory, [e.pk for e in found[-COUNT_CITES:]])
            who = f" by {' or '.join(people)}" if people else ""
            span = f", first {_day(found[0].at)}, last {_day(found[-1].at)}" if found else ""
            lines.append(
                {
                    "kind": "count",
                    "value": len(found),
                    "action": action,
                    "who": people,
                    "before": _day(moment),
                    "inputs": [
                        {"at": iso(e.at), "passage_id": cites[e.pk].passage_id}
                        for e in found[-COUNT_CITES:]
                        if e.pk in cites
                    ],
                    "line": f"{len(found)} {action} events{who} before {_day(moment)}{span}",
                }
            )
    pair = _two_things(q, dated)
    if WHICH_FIRST.search(q) and pair:
        a, b = sorted(pair, key=lambda r: r["at"])
        gap = (datetime.fromisoformat(b["at"]) - datetime.fromisoformat(a["at"])).days
        lines.append(
            {
                "kind": "order",
                "first": a["passage_id"],
                "then": b["passage_id"],
                "days_apart": gap,
                "inputs": [{"at": r["at"], "passage_id": r["passage_id"]} for r in (a, b)],
                "line": f"first {_label(a)}, then {_label(b)}, {gap} days apart",
            }
        )
    return lines


def features(memory: Memory, kept: Kept) -> dict[str, float]:
    """Retrieval strength and coverage: how much of the question the kept passages and facts answer."""
    hits = kept.hits
    if not hits:
        return {name: 0.0 for name in WEIGHTS}
    terms = set(retrieval.query_terms(kept.question))
    top = [p for _, p in hits[:COVER_TOP]]
    lexemes = dict(
        memory.passages()
        .filter(pk__in=[p.pk for _, p in hits])
        .annotate(lex=Func(F("search"), function="tsvector_to_array", output_field=ArrayField(CharField())))
        .values_list("pk", "lex")
    )
    covered = [terms & set(lexemes.get(p.pk) or ()) for p in top]
    share = (lambda found: len(found) / len(terms)) if terms else (lambda found: 0.0)
    # The question names a person: do that person's own passages hold the rest of its words?
    names = {m.group(0).casefold() for m in _NAME.finditer(kept.question)}
    people = {
        a.casefold()
        for a in authors(memory)
        if a.casefold() in names or any(part.casefold() in names for part in a.split() if len(part) >= NAME_PART_MIN)
    }
    name_terms = set(retrieval.query_terms(" ".join(people))) if people else set()
    rest = terms - name_terms
    own = [set(lexemes.get(p.pk) or ()) & rest for _, p in hits if p.author.casefold() in people]
    others = [set(lexemes.get(p.pk) or ()) & rest for _, p in hits if p.author.casefold() not in people]
    person_cover = max((len(c) / len(rest) for c in own), default=0.0) if people and rest else max(map(share, covered))
    # Someone else's passages answering it better is the mark of a question about the wrong person.
    other_cover = max((len(c) / len(rest) for c in others), default=0.0) if people and rest else person_cover
    return {
        "cover_one": max(map(share, covered)),
        "person_cover": person_cover,
        "other_lead": other_cover - person_cover,
        "top": hits[0][0] * TOP_SCALE / sum(retrieval.WEIGHTS.values()),
        "facts": float(bool(kept.facts)),
    }


def enough(values: dict[str, float]) -> float:
    """The estimate, 0 to 1, that memory holds the answer: the fitted logistic function of the features."""
    z = BIAS + sum(WEIGHTS[name] * values.get(name, 0.0) for name in WEIGHTS)
    return 1 / (1 + math.exp(-max(-LOGIT_BOUND, min(LOGIT_BOUND, z))))


def keep(memory: Memory, question: str, as_of: datetime | None, *, limit: int = HITS) -> Kept:
    """Search as of the day asked (nothing said after it), the facts as they stood, records, worked-out."""
    kept = Kept(question, as_of)
    kept.hits = search.ranked(memory, question, before=as_of, limit=limit)
    kept.facts = search.known_facts(memory, question, [p for _, p in kept.hits], as_of=as_of)
    kept.records = records(memory, kept)
    kept.worked_out = work_out(memory, kept)
    return kept
