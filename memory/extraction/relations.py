"""People and relations: "my sister Jane", "Tom is my brother", "I have a dog named Max", "Alice's husband
Tom", "I married Tom", "we broke up". Relations of the speaker (or a named owner) and their pets."""

from __future__ import annotations

import re

from .attributes import Fact
from .grammar import NAME, PET_WORDS, PRE, REL, RELATION_WORDS, as_person, name_in, subjects_of
from .statement import Statement
from .vocabulary import PET_SINGULAR, PETS, RELATIONS

_KIN = rf"{RELATION_WORDS}|{PET_WORDS}"  # a relation or a pet
_RELSCAN = [
    re.compile(
        rf"(?:\b(?:[Mm]y|[Oo]ur)|\b(?P<owner>{NAME})'s) (?P<mod>(?:best|little|big|older|younger|baby|"
        rf"twin|elder|late|new|old|step-?) )?(?P<ex>ex-? ?)?(?P<rel>{_KIN}),? (?:(?:named|called) )?"
        rf"(?P<names>{NAME}(?:(?:,? (?:and|&) |, ){NAME})*)"
    ),
    re.compile(
        rf"\b(?P<names>{NAME}),? (?:is|was) (?:my|our) (?P<mod>(?:best|little|big|older|younger|baby|twin|"
        rf"elder|late|new) )?(?P<ex>ex-? ?)?(?P<rel>{_KIN})\b(?!'s| (?:of|from|at|in)\b)"
    ),
    re.compile(
        rf"\b(?P<subj>I|[Ww]e|(?:[Mm]e|I) and (?:my {REL} )?{NAME}|(?:[Mm]y {REL} )?{NAME} and (?:I|me)|{NAME})"
        rf" (?P<v>have|has|had|got|adopted|rescued|just got|just adopted|welcomed)"
        rf" (?:a|an|one|two|three|\d) (?:new |little |baby |rescue |older |younger |twin )?(?P<rel>{_KIN})"
        rf"(?:(?: (?:named|called) |, |: )(?P<names>{NAME}(?:(?:,? (?:and|&) |, ){NAME})*))?(?=\s*(?:[,.;!]|$"
        r"| (?:named|called|and|who|that|which|at|in|on|since|last|this|yesterday|today|recently|now|too)\b))"
    ),
    re.compile(
        rf"(?:\b(?:[Mm]y|[Oo]ur)|\b(?P<owner>{NAME})'s) (?P<rel>{_KIN})(?:'s name is| is called| is named) "
        rf"(?P<names>{NAME})"
    ),
]
_COUPLE = {
    "married": "spouse",
    "divorced": "spouse",
    "engaged": "partner",
    "dating": "partner",
    "seeing": "partner",
    "broke": "partner",
    "split": "partner",
    "separated": "spouse",
}
_COUPLE_RX = [
    re.compile(
        PRE + r" (?P<v>married|am married to|is married to|got married to|have been married to|has been "
        r"married to|got engaged to|am engaged to|is engaged to|am dating|is dating|have been dating|has been"
        r" dating|am seeing|broke up with|split up with|split from|divorced|got divorced from|am divorced from"
        rf"|separated from) (?P<val>{NAME})\b"
    ),
    re.compile(
        PRE + r" (?P<v>got married|are married|married|got engaged|are engaged|are dating|have been dating|"
        r"broke up|split up|got divorced|divorced|separated)\b"
    ),
]


def relations(statement: Statement) -> list[Fact]:
    """'my sister Jane', 'Tom is my brother', 'I have a dog named Max', 'Alice's husband Tom'."""
    out = []
    for rx in _RELSCAN:
        for m in rx.finditer(statement.text):
            g = m.groupdict()
            if statement.gated(m.start(), m.end()):
                continue
            subj = g.get("subj") or ""
            shared = re.search(r"\b(?:I|[Mm]e)\b", subj)  # "Me and my boyfriend Theo got a kitten": ours
            owner = (
                name_in(g["owner"])
                if g.get("owner")
                else statement.me
                if shared or not subj
                else next(iter(subjects_of(subj, statement.me)), None)
            )
            rel = g["rel"].lower()
            names = [n for n in (name_in(x) for x in re.split(r",? (?:and|&) |, ", g.get("names") or "")) if n]
            if not owner or (rel not in PETS and not names):
                continue
            if rel not in PETS and not rel.endswith(("s", "ren")):
                names = names[:1]  # "my sister Jane and Tom": only Jane is the sister
            pet = PET_SINGULAR.get(rel, rel)
            ended = bool(
                g.get("ex")
                or (g.get("mod") or "").strip() == "late"
                or g.get("v") == "had"
                or (rel in PETS and re.search(r"\b(?:died|passed away|ran away|put down|passed)\b", statement.text))
            )
            when = statement.date_for(m, "past")[0] if rel in PETS and (g.get("v") or ended) else None
            if rel in PETS:
                values = [f"{n} ({pet})" for n in names] or [pet]
                out += [statement.fact(owner, "pet", x, when, ended) for x in values]
                continue
            attr = RELATIONS[rel]
            values = [f"{n} ({rel})" if attr == "relative" else n for n in names]
            out += [statement.fact(owner, attr, x, None, ended) for x in values if as_person(x) != owner]
    for i, rx in enumerate(_COUPLE_RX):
        for m in rx.finditer(statement.text):
            g = m.groupdict()
            people = subjects_of(g["subj"], statement.me)
            if statement.gated(m.start(), m.end()) or g.get("neg") or not statement.me or statement.me not in people:
                continue
            other = name_in(g["val"]) if i == 0 else next((p for p in people if p != statement.me), None)
            if i == 0 and people != [statement.me] or not other:
                continue
            key = next(k for k in _COUPLE if k in g["v"])
            ended = key in ("divorced", "broke", "split", "separated")
            when = statement.date_for(m, "past")[0]
            out.append(statement.fact(statement.me, _COUPLE[key], other, when, ended))
    return [f for f in out if f]
