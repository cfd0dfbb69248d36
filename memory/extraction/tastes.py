"""Rules about tastes: what a person likes and dislikes, and their hobbies ("I love hiking and reading",
"I can't stand coffee", "my favourite band is Muse", "I play the cello", "in my free time I paint")."""

from __future__ import annotations

import re

from .grammar import LIST, NAME, PRE, VAL, alternatives, gerund
from .rules import Found, Reading, list_values, noun_phrase_value, rule
from .vocabulary import INSTRUMENTS, OUTINGS, SPORTS


def read_activities(found: Found) -> Reading:
    """Things done, named as activities: "I like to paint and go hiking" -> painting, hiking."""
    values = [re.sub(r"^go ", "", x) for x in list_values(found).values]
    values = [
        x
        if x.split()[0].endswith("ing") or " " in x and x.split()[0] in ("the", "a")
        else gerund(x.split()[0]) + x[len(x.split()[0]) :]
        for x in values
    ]
    return Reading(found.attribute, values)


RULES = [
    rule(
        "likes",
        PRE + r" (?P<v>love|loves|like|likes|enjoy|enjoys|adore|adores|"
        r"am(?P<neg2> not| no longer)?(?: really| so| totally| very)? into|"
        r"is(?P<neg3> not| no longer)?(?: really| so)? into|are into|"
        r"am obsessed with|is obsessed with|am passionate about|is passionate about|am a (?:big |huge |massive "
        r"|great |real )?fan of|is a (?:big |huge )?fan of|am fond of|is fond of|have always loved|has always "
        r"loved|have always liked|have always enjoyed|have a love for|have a passion for|prefer|prefers|used to "
        r"love|used to like|really love|really like) " + LIST,
        list_values,
        dated=False,
        negation_flips=True,
    ),
    rule(
        "dislikes",
        PRE + r" (?P<v>hate|hates|dislike|dislikes|detest|detests|cannot stand|can not stand|"
        r"am not a (?:big )?fan of|is not a (?:big )?fan of|am scared of|is scared of|am afraid of|is afraid of|"
        r"am terrified of|is terrified of) " + LIST,
        list_values,
        dated=False,
    ),
    rule(
        "likes",
        rf"(?:\b[Mm]y|\b(?P<owner>{NAME})'s) (?P<v>favou?rite) (?:[a-z]+ ){{0,2}}(?:is|are|has to be) " + VAL,
        noun_phrase_value,
        dated=False,
    ),
    rule(
        "likes",
        r"(?:^|[,;:] |\b(?:and|but|so) )(?P<val>(?:[\w-]+ ){0,2}[\w-]+) (?P<v>is|are) (?:my|our) "
        r"(?:absolute |all-time )?favou?rites?(?: thing)?(?=\s*(?:[,.;!]|$))",
        noun_phrase_value,
        dated=False,
    ),
    rule(
        "likes",
        PRE + r" (?P<v>am|is) (?:a )?(?:big |huge |massive |die-hard |lifelong )?"
        r"(?P<val>[A-Z][\w&'.]*(?: [A-Z][\w&'.]*){0,2}) (?:fan|supporter)\b",
        noun_phrase_value,
        dated=False,
    ),
    rule(
        "hobby",
        rf"(?:\b[Mm]y|\b(?P<owner>{NAME})'s) (?:favou?rite |main |new )?(?P<v>hobby|hobbies|pastime|"
        r"pastimes) (?:is|are|include|includes) " + LIST,
        list_values,
        dated=False,
    ),
    rule(
        "hobby",
        r"(?:^|[,;:] |\b(?:and|but|so) )(?P<val>(?:[\w-]+ ){0,2}[\w-]+) (?P<v>is) (?:my|a) (?:favou?rite"
        r" |big |new )?(?:hobby|pastime)",
        noun_phrase_value,
        dated=False,
    ),
    rule(
        "hobby",
        PRE + r" (?P<v>play|plays|have been playing|has been playing|have played|has played|am "
        r"learning(?: to play)?|is learning(?: to play)?|learned to play) (?:the )?(?P<val>"
        + alternatives(INSTRUMENTS + SPORTS + ["video games", "board games"])
        + r")\b",
        noun_phrase_value,
    ),
    rule(
        "hobby",
        PRE + rf" (?P<v>go|goes|love going|like going|enjoy going) (?P<val>{alternatives(OUTINGS)})\b",
        noun_phrase_value,
        dated=False,
    ),
    rule(
        "hobby",
        r"\b[Ii]n (?:my|our) (?:free|spare) time,? (?:(?P<subj>I|we) )?(?P<v>)(?:like to |love to |"
        r"enjoy |usually |often |mostly )*" + LIST,
        read_activities,
        dated=False,
    ),
    rule("hobby", PRE + r" (?P<v>took up|have taken up|has taken up) " + VAL, noun_phrase_value),
]
