"""Reading dates in a statement: "next Friday", "two years ago", "since March", "on 3 May 2024".

Pure and deterministic: a date resolves against the item's own day, never the clock. The extractor keeps
day precision: a period ("next month", "in 2019") resolves to its first day.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

MONTHS = {m: i for i, m in enumerate(
    "january february march april may june july august september october november december".split(), 1)}
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
MONTHS["sept"] = 9
WEEKDAYS = {d: i for i, d in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())}
WEEKDAYS.update({"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4, "sat": 5, "sun": 6})
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2}

_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December|" \
         r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
_DAY = r"(?:[Mm]onday|[Tt]uesday|[Ww]ednesday|[Tt]hursday|[Ff]riday|[Ss]aturday|[Ss]unday)"
_DAY_ABBR = r"(?:Mon|Tues?|Wed|Thu(?:rs?)?|Fri|Sat|Sun)"  # only after last/next/this/on: "sat" is also a verb
_NUM = r"(?:\d{1,2}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:a )?couple of)"
_UNIT = r"(?:day|week|month|year)s?\b"

DATE_RE = re.compile(
    r"\b(?:"
    r"(?P<rel2>the day (?:after tomorrow|before yesterday))"
    r"|(?P<iso>(?P<iy>\d{4})-(?P<im>\d{2})-(?P<id>\d{2}))"
    r"|(?:on )?(?:the )?(?P<d1>\d{1,2})(?:st|nd|rd|th)? (?:of )?(?P<m1>" + _MONTH + r")(?:,? (?P<y1>\d{4}))?"
    r"|(?:on )?(?P<m2>" + _MONTH + r") (?P<d2>\d{1,2})(?:st|nd|rd|th)?\b(?:,? (?P<y2>\d{4}))?"
    r"|(?P<rel>today|tonight|tomorrow|yesterday|this (?:morning|afternoon|evening))\b"
    r"|(?P<wmod>next|last|this coming|this past|this|coming|on|past) (?P<wd>" + _DAY + "|" + _DAY_ABBR + r")\b"
    r"|(?P<wd2>" + _DAY + r")\b(?!s)"
    r"|(?P<pmod>next|last|this coming|this past|this|coming|past) (?P<per>weekend|week|month|year|spring|summer"
    r"|autumn|fall|winter)\b"
    r"|in (?P<n1>" + _NUM + r") (?P<u1>" + _UNIT + r")(?:'s time| from now)?"
    r"|(?P<n2>" + _NUM + r") (?P<u2>" + _UNIT + r") ago"
    r"|for (?:the (?:past|last) )?(?P<n3>" + _NUM + r") (?P<u3>" + _UNIT + r")"
    r"|(?P<mmod>in|since|from|until|till|by|early|late|mid|next|last|this|back in) (?:of )?(?P<m3>" + _MONTH
    + r")(?:,? (?P<y3>\d{4}))?"
    r"|(?P<ymod>in|since|from|until|till|back in|of|by) (?P<y4>(?:19|20)\d{2})\b"
    r")",
    re.I,  # "Since January", "Next Friday" open sentences
)


def _shift(day: date, n: int, unit: str) -> date:
    """`day` moved by n days/weeks/months/years (month ends clamp: Jan 31 + 1 month = Feb 28)."""
    unit = unit.rstrip("s")
    if unit == "day":
        return day + timedelta(days=n)
    if unit == "week":
        return day + timedelta(weeks=n)
    months = day.month - 1 + n * (12 if unit == "year" else 1)
    year, month = day.year + months // 12, months % 12 + 1
    for d in (day.day, 30, 29, 28):
        try:
            return date(year, month, d)
        except ValueError:
            continue
    raise AssertionError("unreachable")


def _num(word: str) -> int:
    return int(word) if word.isdigit() else NUMBERS[word.lower()]


def _month_day(today: date, month: int, day: int, year: str | None, tense: str) -> date | None:
    """A month and day without a year lands in the year the tense points to: a plan is the next such day,
    a past event the last one, anything else this year."""
    try:
        if year:
            return date(int(year), month, day)
        found = date(today.year, month, day)
    except ValueError:
        return None
    if tense == "future" and found < today:
        return found.replace(year=today.year + 1)
    if tense == "past" and found > today:
        return found.replace(year=today.year - 1)
    return found


def find_date(text: str, today: date, tense: str = "present") -> tuple[date | None, tuple[int, int] | None, str]:
    """The first date expression in `text`, resolved against `today`.

    Returns (date, span, modifier). `tense` is "future", "past" or "present" and decides the ambiguous
    cases: a bare "Friday" or "March 3". The modifier is "since", "until" or "" so the caller knows whether
    the date starts or ends the fact. A period ("next month", "last year", "in 2019") resolves to its first
    day: the extractor keeps day precision and says so rather than inventing a finer date.
    """
    for m in DATE_RE.finditer(text):
        g = m.groupdict()
        mod = (next((x for x in (g["mmod"], g["ymod"]) if x), "") or "").lower()
        mod = "since" if mod in ("since", "from") else "until" if mod in ("until", "till", "by") else ""
        found: date | None = None
        if g["rel2"]:
            found = today + timedelta(days=2 if "after" in g["rel2"] else -2)
        elif g["iso"]:
            try:
                found = date(int(g["iy"]), int(g["im"]), int(g["id"]))
            except ValueError:
                continue
        elif g["m1"] or g["m2"]:
            month = MONTHS[(g["m1"] or g["m2"]).rstrip(".").lower()]
            found = _month_day(today, month, int(g["d1"] or g["d2"]), g["y1"] or g["y2"], tense)
        elif g["rel"]:
            found = today + timedelta(days={"tomorrow": 1, "yesterday": -1}.get(g["rel"].lower(), 0))
        elif g["wd"] or g["wd2"]:
            wd = WEEKDAYS[(g["wd"] or g["wd2"]).lower()]
            wmod = (g["wmod"] or "").lower().replace("this coming", "coming").replace("this past", "last")
            ahead = (wd - today.weekday()) % 7  # days to the coming such weekday (0: today)
            if wmod in ("last", "past") or (wmod in ("on", "") and tense == "past"):
                found = today - timedelta(days=(today.weekday() - wd) % 7 or 7)
            elif wmod == "next":
                # "next Friday" is the Friday of next week, not the one in two days.
                found = today - timedelta(days=today.weekday()) + timedelta(days=7 + wd)
            else:
                found = today + timedelta(days=ahead)
        elif g["per"]:
            step = {"next": 1, "coming": 1, "this coming": 1, "last": -1, "past": -1, "this past": -1}.get(
                g["pmod"].lower(), 0)
            per = g["per"]
            if per in ("week", "weekend"):
                monday = today - timedelta(days=today.weekday()) + timedelta(weeks=step)
                found = monday + timedelta(days=5 if per == "weekend" else 0)
            elif per == "month":
                found = _shift(today.replace(day=1), step, "month")
            elif per == "year":
                found = date(today.year + step, 1, 1)
            else:  # a season starts on the first day of its first month (northern hemisphere)
                first = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}[per]
                found = date(today.year, first, 1)
                if step > 0 and found <= today:
                    found = found.replace(year=today.year + 1)
                elif step < 0:
                    found = found.replace(year=today.year - (found >= today))
        elif g["n1"]:
            found = _shift(today, _num(g["n1"]), g["u1"])
        elif g["n2"]:
            found = _shift(today, -_num(g["n2"]), g["u2"])
        elif g["n3"]:
            # "for five years" dates a start only in the perfect ("I've lived here for five years").
            if not re.search(r"\b(?:have|has|had)\b", text):
                continue
            found, mod = _shift(today, -_num(g["n3"]), g["u3"]), "since"
        elif g["m3"]:
            month = MONTHS[g["m3"].rstrip(".").lower()]
            shift = {"next": "future", "last": "past"}.get(g["mmod"].lower(), tense)
            found = _month_day(today, month, 1, g["y3"], shift)
        elif g["y4"]:
            found = date(int(g["y4"]), 1, 1)
        if found:
            return found, m.span(), mod
    return None, None, ""

