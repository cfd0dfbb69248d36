"""The sentence a rule reads: who speaks, the day, and the checks every rule shares (hypotheticals, quoted
speech, the date of a clause)."""

from __future__ import annotations

import re
from datetime import date

from .attributes import Fact
from .dates import find_date
from .grammar import CORRECTION, HYPOTHETICAL


class Statement:
    """One sentence being read: its words, who "I" is in it, the day its dates resolve against, and whether
    it corrects an earlier statement ("Actually, ..."). Every rule reads a match through it."""

    def __init__(self, text: str, me: str | None, today: date):
        self.text, self.me, self.today = text, me, today
        self.correction = bool(CORRECTION.search(text))

    def fact(
        self, subject: str, attribute: str, value: str, when: date | None = None, ended: bool = False
    ) -> Fact | None:
        """The fact, its value tidied and `when` as its start (or its end, when ended); None when there is no value
        and nothing ended."""
        value = re.sub(r"\s+", " ", value).strip(" '\"").rstrip(".,;:!-–—")
        return (
            Fact(
                subject,
                attribute,
                value,
                None if ended else when,
                when if ended else None,
                ended,
                self.correction,
                self.text,
            )
            if value or ended
            else None
        )

    def gated(self, start: int, end: int) -> bool:
        """True when the match sits in a conditional/hypothetical or inside quoted speech."""
        cut = re.search(r"[,;:!?.]| but ", self.text[end:])
        return (
            bool(HYPOTHETICAL.search(self.text, 0, end + (cut.start() if cut else len(self.text))))
            or self.text.count('"', 0, start) % 2 == 1
        )

    def date_for(self, m: re.Match, tense: str) -> tuple[date | None, str]:
        """The date in the match's clause, else in the words leading up to it ('On March 3, I ...')."""
        s = self.text
        lo = max([0] + [x.end() for x in re.finditer(r"[,;]| and | but ", s[: m.start()])])
        hi = m.end() + (c.start() if (c := re.search(r"[,;]| and | but ", s[m.end() :])) else len(s))
        for text in (s[lo:hi], s[: m.start()]):
            found, _span, mod = find_date(text, self.today, tense)
            if found:
                return found, mod
        return None, ""
