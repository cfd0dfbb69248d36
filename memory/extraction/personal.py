"""Rules about the person themselves: age, nationality, languages, allergies, diet and name ("I'm 34",
"I'm Portuguese", "I speak French and Italian", "I'm allergic to peanuts", "I'm vegan", "call me Ana")."""

from __future__ import annotations

import re

from .grammar import LIST, NAME, PRE, alternatives
from .rules import Found, Reading, list_values, noun_phrase_value, rule
from .vocabulary import DIETS, NATIONALITIES

AGE_MAX = 120  # "I'm 150" is a joke or a typo, not an age


def read_age(found: Found) -> Reading | None:
    """An age in years; after a single name only with "years old" or "turned" ("Tom is 5" may be a score)."""
    n = int(found.value)
    relative = re.match(r"(?:[Mm]y|[Oo]ur) ", found.subject or "")
    if not 0 < n < AGE_MAX or (
        found.single_name and not relative and not found.groups.get("yo") and "turn" not in found.verb
    ):
        return None
    return Reading(found.attribute, [str(n)])


RULES = [
    rule(
        "age",
        PRE + r" (?P<v>am|is|are|will be|am turning|is turning|turned|turn|turns|will turn|just turned)"
        r" (?P<val>\d{1,3})(?P<yo> years? old| years? of age| yo| y/o)?(?=\s*(?:[,.;!]|$|\b(?:and|but|now|"
        r"today|tomorrow|next|this|last|on|in|since|yesterday|so)\b))",
        read_age,
    ),
    rule(
        "nationality",
        PRE
        + r" (?P<v>am|is|are)(?: (?:a|an|proudly|fully))? (?P<val>(?:"
        + "|".join(NATIONALITIES)
        + r")(?:-(?:"
        + "|".join(NATIONALITIES)
        + r"))?)(?: citizen)?\b(?! (?:food|cuisine|"
        r"restaurant|movies?|music|films?|class|lessons?|teacher|language|speaker|culture|wine|literature|"
        r"guy|girl|dishes))",
        noun_phrase_value,
        dated=False,
    ),
    rule(
        "language",
        PRE + r" (?P<v>speak|speaks|am fluent in|is fluent in|am a native speaker of|is a native "
        r"speaker of)(?: fluent| some| a little| basic| conversational| native)? (?P<val>[A-Z][a-z]+"
        r"(?:(?:, | and | or |, and )[A-Z][a-z]+)*)",
        list_values,
        dated=False,
    ),
    rule(
        "allergy",
        PRE + r" (?P<v>am|is|are) (?:severely |very |deathly |mildly )?allergic to " + LIST,
        list_values,
        dated=False,
    ),
    rule(
        "allergy",
        r"\b(?P<subj>I|[Ww]e|" + NAME + r") (?P<v>have|has) (?:a |an )?(?:severe |mild |bad )?"
        r"(?P<val>[a-z]+(?: [a-z]+)?) allergy",
        noun_phrase_value,
        dated=False,
    ),
    rule(
        "diet",
        PRE + r" (?P<v>am|is|are|have been|has been|became|went|have gone|turned)(?P<neg2> no longer| not)?"
        r"(?: (?:a|an))? "
        r"(?:strict |full |fully )?(?P<val>" + alternatives(DIETS) + r")\b(?! (?:food|restaurants?|recipes?|dish|"
        r"dishes|options?|meals?|place|cafe|café|friendly|cooking))",
        noun_phrase_value,
    ),
    rule(
        "name",
        rf"\b[Mm]y name (?P<v>is) (?P<val>{NAME})\b|\b(?:[Cc]all me|I go by) (?P<val2>{NAME})\b",
        noun_phrase_value,
        dated=False,
    ),
]
