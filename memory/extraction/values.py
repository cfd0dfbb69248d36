"""Reading a value out of the words after a verb: a place, an organisation, a short noun phrase, a list.

Each reader returns "" (or no values) when the words are not a self-contained thing of its kind: precision
over recall, as everywhere in the extractor.
"""

from __future__ import annotations

import re

from .dates import DATE_RE
from .grammar import REJECT_START, VALUE_END, VERBISH, gerund, is_non_name
from .vocabulary import NATIONALITIES

_CAPW = r"[A-ZÀ-ÖØ-Þ][\w'’&-]*"
PHRASE_WORDS_MAX = 6  # a longer run of words is a clause, not a thing
LIST_ITEM_WORDS_MAX = 3  # after the first, a list's items are short: "hiking, swimming and reading"


def place(v: str) -> str:
    """Leading capitalised words: 'Lisbon next month' -> 'Lisbon'; 'Rio de Janeiro' stays whole."""
    m = re.match(rf"(?:the )?({_CAPW}(?: (?:(?:of|de|do|da|dos|das|del|la|le) )?{_CAPW})*)", v)
    words = m.group(1).split() if m else []
    while words and (is_non_name(words[-1]) or words[-1] in ("of", "de", "do", "da", "del")):
        words.pop()
    return "" if not words or is_non_name(words[0]) or words[0] in NATIONALITIES else " ".join(words)


def organisation(v: str, lowercase_ok: bool) -> str:
    """A capitalised name ('Acme Corp', 'Bank of America'), or with lowercase_ok a short common noun phrase
    after an article ('a local bakery' -> 'local bakery')."""
    m = re.match(rf"(?:the )?({_CAPW}(?: (?:(?:of|for|and|&|de) )?[A-Z0-9][\w'’&.-]*)*)", v)
    if m:
        words = m.group(1).split()
        while words and (is_non_name(words[-1]) or words[-1] in ("of", "for", "and", "&", "de")):
            words.pop()
        return "" if not words or is_non_name(words[0]) else " ".join(words)
    m = re.match(r"(?:a|an|the) ([a-z][\w-]*(?: [a-z][\w-]*){0,3})", v) if lowercase_ok else None
    if not m:
        return ""
    words = re.split(
        r" (?:in|on|near|as|since|for|with|where|which|that|and|but|because|from|during|until|"
        r"while|when|so|every|last|next|this|downtown|now)\b",
        " " + m.group(1),
    )[0].split()
    value = " ".join(words)
    return "" if not words or value in ("moment", "weekend", "time", "living") else value


# "I love the beach" is a taste; "I love the colour" is a reaction to something on screen. Only these
# generic things keep their "the".
_GENERIC_THE = set(
    "beach ocean sea mountains outdoors sun snow rain city countryside summer winter spring autumn "
    "fall theatre theater cinema movies opera ballet gym water sunsets sunrises forest woods "
    "outdoors stars night".split()
)
_RELATIVE = {"that", "which", "who", "whose", "where", "when"}
# Words that, just before a subject or at a value's end, show the words belong to another clause ("in Porto
# and I", "the things I love", "a trip to").
NOT_BEFORE_SUBJECT = set(
    "in at to from for with of on by near into visit visited about than things thing one ones "
    "stuff what everything anything something people place places way person whatever".split()
)


def noun_phrase(v: str, likes: bool = False) -> str:
    """A short noun phrase: cut at the first word that starts another clause, drop dates and articles.
    Empty when the words are not a self-contained thing ("stories that tackle...", "it", "the colour")."""
    v = " " + v
    if (stop := VALUE_END.search(v)) and stop.group(0).split()[0].lower() in _RELATIVE:
        return ""  # "I love stories that tackle important issues": the clause is the point, not "stories"
    v = v[: stop.start()] if stop else v
    dm = DATE_RE.search(v)
    v = (v[: dm.start()] if dm else v).strip(" -–—:'\"")
    v = re.sub(r"\s+(?:and stuff|and things|and all|as well|at all|so|really)$", "", v)
    v = re.sub(r"\s+[A-Z][a-z]+$", "", v) if re.match(r"[a-z]", v) else v  # "the thought Nate": vocative
    words = v.split()
    if likes and words and words[0].lower() == "the" and (len(words) != 2 or words[1].lower() not in _GENERIC_THE):
        return ""
    v = re.sub(r"^(?:the|a|an|some|any|both)\s+", "", v, flags=re.I)
    words = v.split()
    if (
        not words
        or len(words) > PHRASE_WORDS_MAX
        or " ".join(words[:2]).lower() in REJECT_START
        or words[0].lower() in REJECT_START
        or VERBISH.search(v)
        or words[-1].lower() in NOT_BEFORE_SUBJECT
        or re.search(r"\b(?:you|your|yours|him|her|them|it|this|that|they|he|she|myself|me)\b", v, re.I)
    ):
        return ""
    return v


def phrase_list(v: str, likes: bool = False) -> list[str]:
    """'hiking, swimming and reading' -> three values; 'Porto, the weather is great' -> 'Porto' only, because
    a comma without a closing 'and' is not a list. One part that is not a clean noun phrase voids the list:
    "the freedom and connection it brings" is a clause, not two tastes."""
    v = re.split(r",\s*(?:but|which|so|because|since|and (?:I|we|it|my)|though|especially)\b", v)[0]
    parts = [p.strip() for p in v.split(",")]
    if len(parts) > 1 and not re.search(r"(?:^|\s)(?:and|or|&)\s", parts[-1]):
        if re.search(r"\b(?:a|an|the) \w+$", parts[0]):
            return []  # "creating a safe, inviting place": the comma is inside the noun phrase
        parts = parts[:1]
    pieces = [x for part in parts for x in re.split(r"\s+(?:and|or|&)\s+|^(?:and|or)\s+", part) if x.strip()]
    out = []
    for i, piece in enumerate(pieces):
        if m := re.match(r"to ([a-z]+)\b(.*)", piece.strip()):  # "I love to paint" -> "painting"
            piece = gerund(m.group(1)) + m.group(2)
        value = noun_phrase(piece, likes)
        if not value or (i and len(value.split()) > LIST_ITEM_WORDS_MAX):
            return []
        out.append(value)
    return out
