"""A rule of the extractor: a subject, a verb and a value of one kind ("I live in Porto", "Tom works at
Acme"), and how one match of it becomes facts.

The rules themselves sit with what they are about (work_and_places, tastes, plans, personal); each names the
reader that takes its value out of the words after the verb. What every rule shares is here: whose fact it
is, negation, whether the value has ended, and the date.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from .attributes import Fact
from .grammar import BARE_VERBS, FUTURE, PAST, PAST_STATE, THIRD_PERSON_VERBS, name_in, subjects_of
from .statement import Statement
from .values import NOT_BEFORE_SUBJECT, noun_phrase, phrase_list


class Found(NamedTuple):
    """One match of a rule, as its reader sees it."""

    attribute: str  # the rule's, or "dislikes" for a negated like
    value: str  # the words the value is read from (group val or val2)
    verb: str  # group v
    groups: dict
    subject: str | None  # the subject phrase as written; None when the rule's subject is the speaker
    single_name: bool  # the subject is one name (not I, we, or two people)
    ended: bool


class Reading(NamedTuple):
    """What a reader made of a match: the attribute (a reader may change it: a student's "employer" is a
    school), the values, and facts about the same subject read on the way ("a nurse at St Mary's": the
    employer too)."""

    attribute: str
    values: list[str]
    extra: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Rule:
    attribute: str
    pattern: re.Pattern
    read: Callable[[Found], Reading | None]  # None or no values: the match states nothing
    # What a sentence must hold for the pattern to match in it: its verb (group v), looked for first. Most
    # patterns open with the subject's alternation and its lookbehinds, which the regular expression engine
    # tries at every position of every sentence; the verbs are cheap to look for and rarely there, so this
    # spares most sentences every pattern, with the same facts (bench/README.md "Fact extraction").
    needs: re.Pattern | None = None
    ended: bool = False  # the verb always ends the value ("I quit my job")
    dated: bool = True  # the sentence's date starts (or ends) the fact
    tense: str | None = None  # how to read a bare date ("Friday"); None: as the verb's tense says
    negation_flips: bool = False  # a negated like is a dislike; otherwise a negated statement states nothing
    need_date: bool = False  # only with a date, not before the day it was said (a plan)


def rule(attribute: str, pattern: str, read: Callable[[Found], Reading | None], **options) -> Rule:
    compiled = re.compile(pattern)
    verb = required_verb(pattern)
    return Rule(attribute, compiled, read, needs=re.compile(verb, compiled.flags) if verb else None, **options)


def required_verb(pattern: str) -> str | None:
    """The source of group v when every match of `pattern` holds it: the group stands at the pattern's top
    level, not made optional, in a pattern with no top-level alternative. Then wherever the pattern matches,
    the group's source alone matches too; with the space the pattern sets before it, when it does (" is" is
    in far fewer sentences than "is", which "this" and "his" hold). None otherwise (the rule is then tried
    on every sentence)."""
    depth, in_class, start, i = 0, False, None, 0
    spaced = False
    found = None
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            if depth == 0 and pattern.startswith("(?P<v>", i):
                start = i + len("(?P<v>")
                spaced = pattern[i - 1 : i] == " " and pattern[i - 2 : i - 1] != "\\"
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0 and start is not None and found is None:
                if pattern[i + 1 : i + 2] in ("?", "*", "{"):
                    return None
                found = pattern[start:i]
        elif char == "|" and depth == 0:
            return None
        i += 1
    if not found:
        return None
    return f" (?:{found})" if spaced else found


def present(values: list[str]) -> list[str]:
    """The values that are not empty."""
    return [value for value in values if value]


def noun_phrase_value(found: Found) -> Reading:
    """The value as one short noun phrase ("my favourite food is sushi", "my name is Ana")."""
    return Reading(found.attribute, present([noun_phrase(found.value, likes=found.attribute == "likes")]))


def list_values(found: Found) -> Reading:
    """The value as a list of short noun phrases ("hiking, swimming and reading")."""
    return Reading(found.attribute, phrase_list(found.value, likes=found.attribute in ("likes", "dislikes")))


def _whose(m: re.Match, statement: Statement) -> list[str]:
    """Whose fact a match states: a named owner ("Tom's favourite"), the speaker, or the subject phrase's
    people; nobody when the subject is in fact another clause's word."""
    g = m.groupdict()
    raw = g.get("subj")
    if g.get("owner"):
        return [x for x in [name_in(g["owner"])] if x]
    if raw is None:  # "my favourite ...", "In my free time ...": the speaker
        return [statement.me] if statement.me else []
    before = statement.text[: m.start("subj")].split()[-1:]
    if before and before[0].lower() in NOT_BEFORE_SUBJECT:
        return []  # "in Porto and I", "the things I love": not the subject of the verb
    return subjects_of(raw, statement.me)


def apply(rule: Rule, m: re.Match, statement: Statement) -> list[Fact]:
    """The facts one match of `rule` states, or none (gated, nobody's, negated, or no value read)."""
    g, s = m.groupdict(), statement.text
    if statement.gated(m.start(), m.end()):
        return []
    v, raw = (g.get("v") or "").strip(), g.get("subj")
    neg = " ".join(x.strip() for x in (g.get("neg"), g.get("neg2"), g.get("neg3")) if x)
    subjects = _whose(m, statement)
    if not subjects:
        return []
    first = v.split()[0] if v else ""
    single_name = bool(raw and raw.strip(" ,") not in ("I", "we", "We") and " and " not in raw)
    if not neg and ((single_name and first in BARE_VERBS) or (raw == "I" and first in THIRD_PERSON_VERBS)):
        return []  # "Kids love the beach" is not about a person called Kids
    ended = bool(
        rule.ended
        or PAST_STATE.match(v)
        or "no longer" in neg
        or (neg and re.search(r"\bany ?(?:more|longer)\b", s[m.start() :]))
    )
    attribute = rule.attribute
    if neg and not ended:
        if not rule.negation_flips:
            return []
        attribute = "dislikes"
    reading = rule.read(Found(attribute, g.get("val") or g.get("val2") or "", v, g, raw, single_name, ended))
    if reading is None or not reading.values:
        return []
    when = None
    if rule.dated:
        tense = rule.tense or ("future" if FUTURE.search(v) else "past" if PAST.search(v) else "present")
        when, mod = statement.date_for(m, tense)
        if mod == "until" and not ended:
            when = None
        if rule.need_date and (when is None or when < statement.today):
            return []
    said = [(reading.attribute, value) for value in reading.values] + list(reading.extra)
    return [f for who in subjects for a, x in said if (f := statement.fact(who, a, x, when, ended))]
