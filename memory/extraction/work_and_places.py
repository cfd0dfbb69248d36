"""Rules about work and places: where a person lives and comes from, who they work for, their job title,
their school ("I moved to Lisbon", "Tom works at Acme as a designer", "I'm a nurse", "I study at MIT")."""

from __future__ import annotations

import re

from .grammar import JOB_TITLE, NAME, POSSESSOR, PRE, VAL, VERBISH
from .rules import Found, Reading, noun_phrase_value, present, rule
from .values import noun_phrase, organisation, place
from .vocabulary import TITLE_NOISE

# Characters after an organisation's name in which "club", "team", "church"... show a group the person is
# in, not an employer ("I joined Porto running club").
GROUP_WORD_REACH = 40
_GROUP = re.compile(
    r"\b(?:club|group|team|class|community|gym|church|choir|league|band|course|program|support|"
    r"meetup|workshop)\b"
)
TITLE_WORDS_MAX = 5  # "I'm a senior backend software engineer" is a title; longer is a description
_SCHOOL = re.compile(r"\b(?:University|College|School|Academy|Institute|Uni|High|Polytechnic|Conservatory)\b")


def read_place(found: Found) -> Reading:
    """A place name: 'Lisbon next month' -> 'Lisbon'."""
    return Reading(found.attribute, present([place(found.value)]))


def _organisation(found: Found, lowercase_ok: bool) -> Reading | None:
    """An employer (or school), with the job title when the words give one ("as a designer"). An ended
    value may be empty: "I quit my job" ends whatever employer is current."""
    val, extra = found.value, []
    org = organisation(val, lowercase_ok) if val else ""
    after = val[len(org) : len(org) + GROUP_WORD_REACH] if org else ""
    if (val and not org) or _GROUP.search(after):
        return None
    if re.search(r"\bstart(?:ed|ing)? at\b", found.verb) and found.subject != "I":
        return None  # "Mia just started at Oxford" is as likely a school as a job
    title = found.groups.get("title")
    if title and (t := noun_phrase(title)):
        extra.append(("job_title", t))
    elif org and (said := re.search(rf"\bas (?:a |an |the )?({JOB_TITLE})", val[len(val.split(org)[0]) + len(org) :])):
        extra.append(("job_title", said.group(1)))
    return Reading(found.attribute, [org] if org or found.ended else [], tuple(extra))


def read_organisation(found: Found) -> Reading | None:
    """A capitalised organisation ('Acme Corp', 'Bank of America')."""
    return _organisation(found, lowercase_ok=False)


def read_organisation_or_noun(found: Found) -> Reading | None:
    """A capitalised organisation, or a short common noun phrase after an article ('a local bakery')."""
    return _organisation(found, lowercase_ok=True)


def read_job_title(found: Found) -> Reading | None:
    """A job title, and the employer after it ("a nurse at St Mary's"); a student's is their school."""
    title = " ".join(w for i, w in enumerate(found.value.split()) if i or w.lower() not in TITLE_NOISE)
    title = title if len(title.split()) <= TITLE_WORDS_MAX and not VERBISH.search(title) else ""
    org = organisation(found.groups.get("org") or "", True) if found.groups.get("org") else ""
    if not title:
        return None
    if title.lower().endswith("student") and org:
        return Reading("school", [org])
    return Reading(found.attribute, [title], (("employer", org),) if org else ())


def read_school(found: Found) -> Reading:
    """A school: a name with University, College, School... in it, or an acronym ('MIT')."""
    org = organisation(found.value, False)
    return Reading(found.attribute, [org] if _SCHOOL.search(org) or re.fullmatch(r"[A-Z]{2,6}", org) else [])


_LIVE = (
    r"live|lives|lived|living|reside|resides|resided|am living|is living|are living|have been living|"
    r"has been living|have lived|has lived|used to live|am based|is based|are based|moved|relocated|"
    r"have moved|has moved|am moving|is moving|are moving|will move|will be moving|am going to move|"
    r"am relocating|is going to move|are going to move|settled|have settled"
)
_WORK = (
    r"work|works|worked|am working|is working|are working|have been working|has been working|have worked|"
    r"has worked|used to work|am employed|is employed|was employed|will be working|will work"
)

RULES = [
    rule(
        "home_city",
        PRE + rf" (?P<v>{_LIVE})(?: back)?(?: from {NAME})? (?:in|to|over to|out to|down to|up to) " + VAL,
        read_place,
    ),
    rule("hometown", PRE + r" (?P<v>am|is|are|come|comes|came)(?: originally)? from " + VAL, read_place),
    rule("hometown", PRE + r" (?P<v>grew up|was born|was raised|were born|were raised) in " + VAL, read_place),
    rule("employer", PRE + rf" (?P<v>{_WORK}) (?:at|for|by) " + VAL, read_organisation_or_noun),
    rule(
        "employer",
        PRE + r" (?P<v>joined|have joined|has joined|will join|am joining|is joining|started at|"
        r"will start at|am starting at|started working at|started working for|began working at|got hired at|"
        r"got hired by|was hired by|have been hired by|was recruited by) " + VAL,
        read_organisation,
    ),
    rule(
        "employer",
        PRE + r" (?P<v>got|landed|accepted|started|began|have|has|found|took|am starting|will start)"
        r" (?:a |an |my |the )?(?:new |first |dream |full-time |part-time )?(?:job|position|role|internship)"
        r"(?: as (?:a |an )?(?P<title>[\w -]+?))? (?:at|with) " + VAL,
        read_organisation,
    ),
    rule(
        "employer",
        PRE + r" (?P<v>quit|left|lost) (?:my|his|her|their) (?:\w+ )?(?:job|position|role)"
        r"(?: (?:at|with) " + VAL + ")?",
        read_organisation,
        ended=True,
    ),
    rule(
        "employer",
        PRE + r" (?P<v>resigned|retired|was laid off|got laid off|have been laid off|was let go|"
        r"got let go|was fired|got fired)(?: from " + VAL + r"|(?=\s*(?:[,.;!]|$| (?:yesterday|today|last|this|on"
        r"|in|after|because|and)\b)))",
        read_organisation,
        ended=True,
    ),
    rule(
        "job_title",
        PRE + r" (?P<v>am|is|are|was|used to be|have been|has been|became|become|will be|"
        r"got promoted to|was promoted to|have been promoted to|has been promoted to)(?P<neg2> no longer| not)?"
        r"(?: (?:now|currently|"
        rf"still|also|finally|officially))? (?:a |an |the )?(?P<val>{JOB_TITLE})(?: (?:at|for|with) (?P<org>"
        r"[^,.;!?()\"]{1,60}))?",
        read_job_title,
    ),
    rule(
        "job_title",
        PRE + r" (?P<v>work|works|worked|am working|is working|have worked|has worked|"
        r"started|start|began) as (?:a |an |the )?(?P<val>(?:[\w-]+ ){0,3}?[\w-]+)(?: (?:at|for|with) "
        r"(?P<org>[^,.;!?()\"]{1,60}))?(?=\s*(?:[,.;!]|$| (?:since|for|in|and|but|now|because)\b))",
        read_job_title,
    ),
    rule(
        "job_title",
        POSSESSOR + r" (?:job|job title|title|role|position) (?P<v>is) (?:a |an |the )?" + VAL,
        noun_phrase_value,
    ),
    rule(
        "school",
        PRE + r" (?P<v>study|studies|studied|am studying|is studying|am a student|is a student|"
        r"was a student|am doing (?:a|my) [\w']+(?: degree)?|graduated|will graduate|am graduating|"
        r"teach|teaches)(?: [a-z]+(?: [a-z]+){0,2})? (?:at|from) " + VAL,
        read_organisation,
    ),
    rule(
        "school",
        PRE + r" (?P<v>go|goes|attend|attends|attended|am attending|is attending|am enrolled|"
        r"is enrolled|got into|was accepted to|got accepted to)(?: to| at| in)? " + VAL,
        read_school,
    ),
]
