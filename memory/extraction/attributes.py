"""The attributes a fact can have, and the Fact an extractor (the rules, or the model) yields."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date


@dataclass(frozen=True)
class Attribute:
    """One attribute: its name, whether a new value ends the current one, and what it holds."""

    name: str
    single: bool  # True: a new value supersedes (ends) the current one; False: values accumulate
    about: str


# The one table of attributes: the extractor, the fact store and the docs all read it from here.
ATTRIBUTES: dict[str, Attribute] = {
    a.name: a
    for a in (
        Attribute("name", True, "what the person is called"),
        Attribute("home_city", True, "where the person lives now"),
        Attribute("hometown", True, "where the person is from, grew up or was born"),
        Attribute("address", True, "postal address"),
        Attribute("nationality", True, "nationality"),
        Attribute("employer", True, "organisation the person works for"),
        Attribute("job_title", True, "job title or occupation"),
        Attribute("school", True, "school or university attended"),
        Attribute("spouse", True, "husband or wife"),
        Attribute("partner", True, "boyfriend, girlfriend, partner or fiancé(e)"),
        Attribute("child", False, "son or daughter"),
        Attribute("sibling", False, "brother or sister"),
        Attribute("parent", False, "mother or father"),
        Attribute("friend", False, "friend"),
        Attribute("colleague", False, "colleague"),
        Attribute("relative", False, "other family, kind in brackets: 'Ana (cousin)'"),
        Attribute("pet", False, "pet, species in brackets: 'Max (dog)', or the species alone"),
        Attribute("likes", False, "something the person likes"),
        Attribute("dislikes", False, "something the person dislikes"),
        Attribute("hobby", False, "hobby or pastime"),
        Attribute("plan", False, "a plan; valid_from is its date when the statement gives one"),
        Attribute("contact_email", True, "email address"),
        Attribute("phone", True, "phone number"),
        Attribute("birthday", True, "birthday: YYYY-MM-DD, or --MM-DD when the year is not said"),
        Attribute("age", True, "age in years, as of valid_from"),
        Attribute("language", False, "language the person speaks"),
        Attribute("allergy", False, "allergy"),
        Attribute("diet", True, "diet: vegetarian, vegan, ..."),
    )
}


@dataclass(frozen=True)
class Fact:
    """One extracted fact. Dates the statement gives override the item's date; None means the item's date.

    `ended` says the value stopped being true ("I no longer work at Acme"); then `valid_to` is when, or None
    for the item's date. An ended fact with an empty value ends whatever value is current ("I quit my
    job"). `correction` marks a statement that fixes an earlier one ("Actually, I live in Braga, not
    Porto"): the store may retract the value it replaces rather than end it.
    """

    subject: str
    attribute: str
    value: str
    valid_from: date | None = None
    valid_to: date | None = None
    ended: bool = False
    correction: bool = False
    evidence: str = field(default="", compare=False)  # the sentence the fact came from
