"""Rules about plans: what a person means to do, and when ("I'm going to Paris next week", "we have a
wedding on Saturday", "my interview is tomorrow"). A plan said with a date that has passed is not one."""

from __future__ import annotations

import re

from .dates import DATE_RE
from .grammar import POSSESSOR, PRE, VAL, VALUE_END
from .rules import Found, Reading, present, rule
from .values import place

PLAN_WORDS_MAX = 8  # a plan is named in a few words; more is a sentence about something else
# Verbs after "I'm going to" that say nothing worth keeping as a plan ("I'm going to see", "... have to").
_PLAN_SKIP = set(
    "be have say tell let see do get need think keep miss stop send give check ask call text make come "
    "help find know look talk wait move moving relocate join turn go".split()
)


def _plan(val: str, v: str) -> str:
    """The plan in a few words, its date removed: 'going to Paris next week' -> 'trip to Paris'."""
    val = DATE_RE.sub("", val)
    val = VALUE_END.sub("", " " + val).strip()
    val = re.sub(r"\s+(?:on|in|at|for|this|next)$", "", re.sub(r"\s+", " ", val)).strip()
    val = re.sub(r"^(?:a|an) ", "", val)
    words = val.split()
    if (
        not words
        or len(words) > PLAN_WORDS_MAX
        or re.search(r"\b(?:you|your|it|that|this|them|us|there|him|her|me)\b", val, re.I)
    ):
        return ""
    if words[0][0].isupper() and "going" in v:
        return f"trip to {place(val)}" if place(val) else ""
    if words[0] in ("the", "a", "an", "my") and "going" in v:
        return "go to " + val
    if words[0].lower() in _PLAN_SKIP or re.match(r"(?:starting|start) (?:at|with|as)\b", val):
        return ""
    return val


def read_plan(found: Found) -> Reading:
    """The plan, named in a few words."""
    return Reading(found.attribute, present([_plan(found.value, found.verb)]))


RULES = [
    rule(
        "plan",
        PRE + r" (?P<v>am planning|is planning|are planning|plan|plans|intend|intends|have planned|"
        r"has planned|am planning on|are planning on) (?:on |to |(?=(?:a|an) (?:trip|vacation|holiday|party|"
        r"visit|move|wedding|surprise)\b))" + VAL,
        read_plan,
        tense="future",
    ),
    rule(
        "plan",
        PRE + r" (?P<v>am going|is going|are going|will|am scheduled|is scheduled|am due|is due|am about)"
        r" (?:to )?" + VAL,
        read_plan,
        tense="future",
        need_date=True,
    ),
    rule(
        "plan",
        PRE + r" (?P<v>am|is|are) (?P<val>(?:flying|travell?ing|heading|driving|visiting|leaving for|"
        r"going on|going back to|taking|having|hosting|attending|running|starting|getting married|getting|throwing|"
        r"celebrating) [^,.;!?()\"]{1,60})",
        read_plan,
        tense="future",
        need_date=True,
    ),
    rule(
        "plan",
        r"\b(?P<subj>I|[Ww]e) (?P<v>have|have got|got) (?:a|an|my|the|our) (?P<val>(?:[\w'-]+ ){0,3}?"
        r"(?:appointment|interview|exam|meeting|flight|trip|surgery|wedding|concert|party|test|conference|"
        r"recital|game|match|race|marathon|vacation|holiday|presentation|audition|check-?up|competition|"
        r"tournament)(?: (?:to|in|with|at) [^,.;!?]{1,30}?)?)(?= (?:on|next|this|tomorrow|tonight|today|in|at)\b)",
        read_plan,
        tense="future",
        need_date=True,
    ),
    rule(
        "plan",
        POSSESSOR + r" (?P<val>(?:[\w-]+ ){0,2}(?:appointment|interview|exam|flight|trip|surgery|wedding|"
        r"concert|party|vacation|holiday|move|presentation|audition|competition|tournament|race|marathon)"
        r"(?: (?:to|in|with|at) [A-Za-z][\w -]{0,25}?)?) (?P<v>is|will be|starts|begins)(?= (?:on|in|next|"
        r"this|tomorrow|today|tonight)\b)",
        read_plan,
        tense="future",
        need_date=True,
    ),
]
