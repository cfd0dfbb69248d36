"""Contacts and birthdays: email, phone, postal address and birthday, only when the statement says whose
they are ("my email is ...", "reach Tom at ...", "my birthday is on 3 May")."""

from __future__ import annotations

import re

from .attributes import Fact
from .dates import find_date
from .grammar import EMAIL, NAME, PHONE, name_in, subjects_of
from .statement import Statement

_CONTACT = re.compile(
    rf"(?:\b[Mm]y|\b(?P<owner>{NAME})'s) (?:new |work |personal |home |private |current |cell |"
    r"mobile )?(?P<what>e-?mail(?: address)?|address|phone(?: number)?|number|cell(?: number)?|"
    r"mobile(?: number)?|cellphone|telephone(?: number)?) (?:is now|is|has changed to|changed to|"
    r"will be|:) (?P<val>[^!?;]+)"
)
_REACH = re.compile(
    rf"\b(?:[Ee]-?mail|[Rr]each|[Cc]ontact|[Ww]rite to|[Tt]ext|[Cc]all|[Rr]ing) (?P<who>me|{NAME}) "
    r"(?:at|on|via) (?P<val>[^!?;]+)"
)
PHONE_DIGITS_MIN = 7  # fewer digits is a count, a year or a room number, not a phone number
_BDAY = [
    re.compile(
        rf"(?:\b[Mm]y|\b(?P<owner>{NAME})'s) birthday(?:'s| is| falls on| was| will be)(?: on)? "
        r"(?P<val>[^,;!?]+)"
    ),
    re.compile(rf"\b(?P<subj>I|{NAME}) (?:was|were) born on (?P<val>[^,;!?]+)"),
    re.compile(
        r"\b(?P<val>[Tt]oday|[Tt]omorrow|[Yy]esterday) (?:is|was) my birthday|\b[Ii]t(?:'s| is) my birthday "
        r"(?P<val2>today|tomorrow)"
    ),
]


def contacts(statement: Statement) -> list[Fact]:
    """Email, phone and postal address, only when the statement says whose they are."""
    out = []
    for rx in (_CONTACT, _REACH):
        for m in rx.finditer(statement.text):
            g = m.groupdict()
            who = (
                statement.me
                if g.get("who") == "me" or (rx is _CONTACT and not g.get("owner"))
                else name_in(g.get("who") or g.get("owner") or "")
            )
            val = g["val"].strip()
            if not who or statement.gated(m.start(), m.start()):
                continue
            if em := re.match(EMAIL, val):
                out.append(statement.fact(who, "contact_email", em.group(0).rstrip(".").lower()))
            elif (ph := re.match(PHONE, val)) and len(re.sub(r"\D", "", ph.group(0))) >= PHONE_DIGITS_MIN:
                out.append(statement.fact(who, "phone", ph.group(0).strip()))
            elif rx is _CONTACT and g["what"] == "address" and re.match(r"\d", val):
                out.append(statement.fact(who, "address", re.split(r" (?:since|now|because)\b", val)[0].strip(" .")))
    for i, rx in enumerate(_BDAY):
        for m in rx.finditer(statement.text):
            g = m.groupdict()
            who = (
                name_in(g["owner"])
                if g.get("owner")
                else next(iter(subjects_of(g.get("subj"), statement.me)), None)
                if g.get("subj")
                else statement.me
            )
            text = g.get("val") or g.get("val2") or ""
            if (
                not who
                or statement.gated(m.start(), m.start())
                or re.search(r"\b(?:week|weekend|month|year)\b|\b(?:in|since) (?:[A-Z]|\d{4})", text)
            ):
                continue
            found, span, _mod = find_date(text, statement.today, "past" if i == 1 else "present")
            if found and span:
                has_year = re.search(r"\b\d{4}\b", text[span[0] : span[1]])
                day = found.isoformat() if has_year else found.strftime("--%m-%d")
                out.append(statement.fact(who, "birthday", day))
    return [f for f in out if f]
