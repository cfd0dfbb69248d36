"""Rule-based fact extraction: the default extractor of the background read.

`extract(text, author=..., at=..., end_user=...)` turns everyday statements ("I moved to Lisbon last year",
"My sister Jane works at Google", "I'm allergic to peanuts") into dated (subject, attribute, value) facts.
It is pure, deterministic and fast (regular expressions over short sentences; no model, no network), so a
re-read of the same item yields the same facts.

Precision is preferred to recall: a wrong fact in memory misleads every later answer, a missing one only
fails to help. So questions, hypotheticals, quoted speech, unnamed third parties ("she", "my boss") and
values that do not look like what the attribute holds are skipped rather than guessed.

This module reads a text line by line and sentence by sentence; the rules are in the modules named for what
they are about: relations (people and pets), contacts (email, phone, address, birthday), and the rules of
work_and_places, tastes, plans and personal, applied by rules.py. The shared grammar is grammar.py, dates
dates.py, the attribute table attributes.py.
"""

from __future__ import annotations

import re
from datetime import date, datetime

from . import personal, plans, tastes, work_and_places
from .attributes import Fact
from .contacts import contacts
from .grammar import as_person, is_non_name
from .relations import relations
from .rules import apply
from .statement import Statement

# Every rule of a subject, a verb and a value, in the order they are tried (the order facts come out in).
RULES = [*work_and_places.RULES, *tastes.RULES, *plans.RULES, *personal.RULES]
_LABEL = re.compile(r"^\s*([A-ZÀ-Þ][\w'.-]*(?: [A-ZÀ-Þ][\w'.-]*){0,2})\s*:\s+(.*)$")
_ASSISTANT = {"assistant", "ai", "bot", "system", "claude", "chatgpt", "gpt", "model", "agent", "tool"}
_USER = {"user", "me", "human", "customer", "client"}
_ABBR = re.compile(r"\b(Dr|Mr|Mrs|Ms|St|Ave|Rd|Jr|Sr|No|Apt|Prof|Mt|vs|etc|e\.g|i\.e|U\.S)\.", re.I)


def _sentences(text: str) -> list[str]:
    """A line cut into sentences, an abbreviation's full stop ("Dr.") not taken for a sentence's end."""
    text = _ABBR.sub(lambda m: m.group(0)[:-1] + "\u2024", text)  # protect "Dr." from the split
    parts = re.split(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(]?[A-Z0-9])", text)
    return [p.replace("\u2024", ".").strip() for p in parts if p.strip()]


# (pattern, replacement, whether the pattern holds an apostrophe: a sentence without one skips it)
_SPELLED_OUT = [
    (re.compile(rx), rep, "'" in rx)
    for rx, rep in (
        (r"\bi\b", "I"),
        (r"\b([Cc])an't\b", r"\1annot"),
        (r"\b([Ww])on't\b", r"\1ill not"),
        (r"n't\b", " not"),
        (r"\bI'm\b", "I am"),
        (r"'re\b", " are"),
        (r"'ve\b", " have"),
        (r"'ll\b", " will"),
        (r"'d\b", " would"),
        (r"\bgonna\b", "going to"),
        (r"\bwanna\b", "want to"),
        (r"\s+", " "),
    )
]


def _normalise(s: str) -> str:
    """Contractions spelled out so one pattern covers "I'm" and "I am"; curly quotes straightened."""
    s = s.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    quoted = "'" in s
    for rx, rep, needs_quote in _SPELLED_OUT:
        if quoted or not needs_quote:
            s = rx.sub(rep, s)
    return s.strip()


def extract(text: str, *, author: str | None, at: datetime | date, end_user: str | None = None) -> list[Fact]:
    """Facts stated in `text`, said by `author` at `at`.

    First person resolves to the author, or to the end user when the item has no author. A line
    "Name: words" (a transcript) is that speaker's; lines of an assistant ("Assistant: ...") are skipped,
    and "User: ..." is the author's. Relative dates resolve against `at`.
    """
    today = at.date() if isinstance(at, datetime) else at
    default = as_person(author) or as_person(end_user)
    facts: list[Fact] = []
    for line in (text or "").splitlines():
        line = re.sub(r"\[[a-z ]+:[^\]]*\]", " ", line)  # "[image: a photo of ...]" annotations
        me = default
        if (lm := _LABEL.match(line)) and (label := lm.group(1)).lower() not in ("correction", "update", "note"):
            if label.lower() in _ASSISTANT:
                continue
            if label.lower() not in _USER and not is_non_name(label.split()[0]):
                me = as_person(label)  # the transcript names who is speaking, whoever saved it
            line = lm.group(2)
        for sentence in _sentences(line):
            s = _normalise(sentence)
            if (
                not s
                or s.endswith("?")
                or re.match(
                    r"(?:do|does|did|are|is|am|have|has|can|will|where|what|who|"
                    r"when|why|how|which)\b \w+",
                    s,
                    re.I,
                )
                and not s.endswith((".", "!"))
            ):
                continue  # a question states nothing
            statement = Statement(s, me, today)
            facts += relations(statement) + contacts(statement)
            for rule in RULES:
                if rule.needs and not rule.needs.search(s):
                    continue
                for m in rule.pattern.finditer(s):
                    facts += apply(rule, m, statement)
    # "My boyfriend Jake and I broke up": the ended reading wins over the plain relation from the same words.
    ended = {(f.subject, f.attribute, f.value, f.evidence) for f in facts if f.ended}
    return list(
        dict.fromkeys(f for f in facts if f.ended or (f.subject, f.attribute, f.value, f.evidence) not in ended)
    )
