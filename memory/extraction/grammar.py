"""The grammar of the rule-based extractor: the shared patterns (who speaks, a name, a relation, the verb's
adverbs and negation, where a value ends), the markers of tense, hypotheticals and corrections, and reading
names. The rules (work_and_places, tastes, plans, personal, relations, contacts) are built from these.
"""

from __future__ import annotations

import re

from .dates import MONTHS
from .vocabulary import JOB_HEADS, NATIONALITIES, NON_NAMES, PETS, RELATIONS


def alternatives(words) -> str:
    """The words as one regular-expression alternation, longest first (so "sisters" wins over "sister")."""
    return "|".join(sorted(map(re.escape, words), key=len, reverse=True))


_CAP = r"[A-ZÀ-ÖØ-Þ][a-zà-öø-ÿ'’-]+"
NAME = rf"{_CAP}(?: {_CAP})?"
RELATION_WORDS, PET_WORDS = alternatives(RELATIONS), alternatives(PETS)
REL = rf"(?:(?:best|little|big|older|younger|baby|twin|elder|late|new|step-?) )?(?:ex-? ?)?(?:{RELATION_WORDS})"
# A capitalised word after a preposition is a place or an object ("in Porto and I ..."), never a subject.
# The lookahead names the letters those subjects start with (a name, "I and", "my", "our"), so that at every
# other position the engine fails at once rather than after eleven lookbehinds: the extractor's rules then
# take half the time, with the same matches.
_NO_PREP = "(?=[A-ZÀ-ÖØ-ÞMmOo])" + "".join(rf"(?<!\b{p} )" for p in "in at to from with of on by near into for".split())
SUBJ = (
    rf"(?P<subj>\b(?:I|[Ww]e)\b|{_NO_PREP}(?:{NAME} and (?:I|{NAME})\b|I and {NAME}|\b(?:[Mm]y|[Oo]ur) {REL},? "
    rf"{NAME},?|\b{NAME}(?:, (?:my|our) {REL},)?))"
)
ADV = (
    r"(?: (?:also|still|now|currently|actually|really|just|already|recently|finally|officially|always|even|"
    r"only|mostly|happily|truly|definitely|honestly|totally|absolutely|literally|both|all|originally|"
    r"basically|usually|often|kind of|sort of))*"
)
NEG = r"(?P<neg> (?:do|does|did) not| never| no longer| am not| is not| are not| have not| has not| cannot)?"
PRE = SUBJ + ADV + NEG + ADV
VAL = r"(?P<val>[^,.;!?()\"]{1,80})"
LIST = r"(?P<val>(?:(?!,\s*(?:but|and I|and we|so|because|which|though)\b)[^.;!?()\"]){1,120})"
JOB_TITLE = (
    rf"(?i:(?:(?!(?:of|for|with|in|at|and|to|the|a|an|who|that|fan|not|no|mom|dad)\b)[\w-]+ ){{0,3}}"
    rf"(?:{alternatives(JOB_HEADS)})(?: of [a-z]+)?)\b"
)
POSSESSOR = rf"(?:[Mm]y|(?P<owner>{NAME})'s)"

# Words after which a value has ended: the rest of the sentence says something else.
VALUE_END = re.compile(
    r"\s(?:because|since|when|while|but|so|as|which|who|that|where|and (?:I|we|my|it|then|she|he|they)|until|"
    r"after|before|if|though|although|whenever|than|especially|with (?:my|you|the kids)|for (?:me|years|a while)|"
    r"every|each|on (?:the )?weekends?|at the moment|right now|these days|nowadays|anymore|any more|"
    r"any longer|lately|too|either|a lot|so much|very much|now|again|tbh|lol|haha|all day|instead|over|"
    r"not|rather|here|there|like|whose)\b.*",
    re.I,
)
REJECT_START = set(
    "it that this these those them you your him her his us me my our their how what when where why who which "
    "whether being to seeing hearing talking chatting hanging spending the way the idea the fact everything "
    "anything nothing something everyone all so lots working doing having getting".split()
)
VERBISH = re.compile(r"\b(?:is|are|was|were|am|be|been|has|have|had|do|does|did|can|will|it's|i|we|'s)\b", re.I)
HYPOTHETICAL = re.compile(
    r"\b(?:if|unless|suppose|supposing|imagine|wish|would|could|might|maybe|perhaps|possibly|probably|whether|"
    r"someday|hope|hoping|hopefully|pretend|wonder|wondering|should|considering|thinking (?:about|of)|"
    r"dream(?:ing)? (?:of|about)|not sure|ask(?:ed|ing|s)?|want(?:s|ed)? to know|wants? to|wanted to|"
    r"need to|have to|try(?:ing)? to|rather|think|guess)\b",
    re.I,
)
CORRECTION = re.compile(
    r"^(?:actually|correction|sorry|oops|to correct|i was wrong|i misspoke)\b|\bi meant\b|"
    r", not [A-Za-z]|\binstead of\b",
    re.I,
)
PAST_STATE = re.compile(
    r"^(?:lived|resided|worked|used to \w+|was employed|was|were|studied|attended|"
    r"graduated|had)$"
)
FUTURE = re.compile(
    r"\b(?:will|going|planning|plan|moving|flying|heading|leaving|starting|turning|"
    r"scheduled|due|about)\b"
)
PAST = re.compile(
    r"\b(?:\w+ed|was|were|got|left|quit|began|became|took|went|joined|had|turned|grew|met|"
    r"lost|broke|split|found|moved)\b"
)
# A single capitalised word before a bare verb ("Kids love the beach") is no person; an "I" before a verb in
# the third person is not the speaker.
BARE_VERBS = set(
    "live work love like enjoy hate are have do am study play speak go plan intend reside come adore "
    "dislike prefer turn attend detest".split()
)
THIRD_PERSON_VERBS = set(
    "lives works loves likes enjoys hates is has does studies plays speaks goes plans intends "
    "resides comes adores dislikes prefers turns attends detests".split()
)
EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
PHONE = r"\+?\(?\d[\d ().-]{5,}\d"
# A verb this short ending consonant, vowel, consonant doubles its last letter ("swim" -> "swimming"); a longer
# one is mostly stressed before its end and does not ("visit" -> "visiting").
DOUBLING_LENGTH_MAX = 4


def gerund(verb: str) -> str:
    """'paint' -> 'painting', 'dance' -> 'dancing', 'swim' -> 'swimming': "I love to paint" stores the
    activity the way people name it."""
    if verb.endswith("ing"):
        return verb
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")):
        return verb[:-1] + "ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", verb) and len(verb) <= DOUBLING_LENGTH_MAX:
        return verb + verb[-1] + "ing"
    return verb + "ing"


def is_non_name(w: str) -> bool:
    """A capitalised word that starts sentences but never names a person ("Yesterday", "Mom", "March")."""
    return w in NON_NAMES or w.lower() in MONTHS


def as_person(name: str | None) -> str | None:
    """Title case for names, so 'alice' and 'Alice' are one subject; ids like 'u_42' are kept as given."""
    name = (name or "").strip()
    if not name:
        return None
    if re.fullmatch(r"[^\W\d_]+(?:[ '.-][^\W\d_]+)*", name):
        return " ".join(w[:1].upper() + w[1:] for w in name.split())
    return name


def name_in(raw: str) -> str | None:
    """A candidate name with leading non-names dropped ('Yesterday Alice' -> 'Alice'); None if none is left."""
    words = re.sub(r"'s?$", "", raw.strip(" ,")).split()
    if words and (words[0].lower() in RELATIONS or words[0].lower() in PETS):
        return None  # "Grandpa", "Mom": a relation, not a name
    while words and (is_non_name(words[0]) or words[0] in NATIONALITIES):
        words.pop(0)
    return as_person(" ".join(words)) if words and not is_non_name(words[-1]) else None


def subjects_of(raw: str | None, me: str | None) -> list[str]:
    """Who the subject phrase names: 'I'/'we' -> me; 'my sister Jane' -> Jane; 'Tom and I' -> Tom and me."""
    raw = (raw or "").strip(" ,")
    if raw in ("I", "we", "We"):
        return [me] if me else []
    if m := re.fullmatch(rf"(?:[Mm]y|[Oo]ur) {REL},? ({NAME}),?", raw):
        raw = m.group(1)
    elif m := re.fullmatch(rf"({NAME}), (?:my|our) {REL},", raw):
        raw = m.group(1)
    parts = re.split(r" and ", raw) if " and " in raw else [raw]
    # "I'm Portuguese and I speak ...": a part that is no name is not a co-subject, the "I" still is.
    return [x for x in (me if p == "I" else name_in(p) for p in parts) if x]
