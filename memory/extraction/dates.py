"""Reading dates in a statement: "next Friday", "two years ago", "since March", "on 3 May 2024".

Pure and deterministic: a date resolves against the item's own day, never the clock. The extractor keeps
day precision: a period ("next month", "in 2019") resolves to its first day.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import MAXYEAR, MINYEAR, date, timedelta

MONTHS = {
    m: i
    for i, m in enumerate(
        "january february march april may june july august september october november december".split(), 1
    )
}
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
MONTHS["sept"] = 9
WEEKDAYS = {d: i for i, d in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())}
WEEKDAYS.update(
    {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4, "sat": 5, "sun": 6}
)
NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "couple of": 2,
}

_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
    r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
)
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
    r"|(?P<mmod>in|since|from|until|till|by|early|late|mid|next|last|this|back in) (?:of )?(?P<m3>"
    + _MONTH
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
    if not MINYEAR <= year <= MAXYEAR:
        raise OverflowError("date value out of range")  # as `day + timedelta(...)` says it
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
        return _same_day_in(found, today.year + 1, step=1)
    if tense == "past" and found > today:
        return _same_day_in(found, today.year - 1, step=-1)
    return found


def _same_day_in(found: date, year: int, *, step: int) -> date:
    """`found`'s month and day in `year`, or in the first year from there, `step` by `step`, that has it:
    29 February is next (or last) there in a leap year, at most 8 years away (1900 and 2100 have none).
    OverflowError past the years a date can hold."""
    while MINYEAR <= year <= MAXYEAR:
        try:
            return found.replace(year=year)
        except ValueError:
            year += step
    raise OverflowError("date value out of range")


# A resolver turns one matched date form into a date (None: not a date after all), against the item's day.
Resolver = Callable[[dict, date, str, str], date | None]
PERFECT = re.compile(r"\b(?:have|has|had)\b")
DAYS_A_WEEK = 7
SATURDAY = 5  # days after Monday: a weekend starts on it
SEASON_STARTS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # months (northern hemisphere)
PERIOD_STEPS = {"next": 1, "coming": 1, "this coming": 1, "last": -1, "past": -1, "this past": -1}


def _day_after_or_before(g: dict, today: date, tense: str, text: str) -> date | None:
    """ "the day after tomorrow", "the day before yesterday"."""
    return today + timedelta(days=2 if "after" in g["rel2"] else -2)


def _iso_day(g: dict, today: date, tense: str, text: str) -> date | None:
    """ "2024-05-03"; None for an impossible day."""
    try:
        return date(int(g["iy"]), int(g["im"]), int(g["id"]))
    except ValueError:
        return None


def _day_of_month(g: dict, today: date, tense: str, text: str) -> date | None:
    """ "3 May", "the 3rd of May 2024", "May 3", "May 3rd, 2024"."""
    month = MONTHS[(g["m1"] or g["m2"]).rstrip(".").lower()]
    return _month_day(today, month, int(g["d1"] or g["d2"]), g["y1"] or g["y2"], tense)


def _named_day(g: dict, today: date, tense: str, text: str) -> date | None:
    """ "today", "tonight", "tomorrow", "yesterday", "this morning"."""
    return today + timedelta(days={"tomorrow": 1, "yesterday": -1}.get(g["rel"].lower(), 0))


def _weekday(g: dict, today: date, tense: str, text: str) -> date | None:
    """ "Friday", "next Friday", "last Fri", "this coming Sunday"."""
    wd = WEEKDAYS[(g["wd"] or g["wd2"]).lower()]
    wmod = (g["wmod"] or "").lower().replace("this coming", "coming").replace("this past", "last")
    if wmod in ("last", "past") or (wmod in ("on", "") and tense == "past"):
        return today - timedelta(days=(today.weekday() - wd) % DAYS_A_WEEK or DAYS_A_WEEK)
    if wmod == "next":
        # "next Friday" is the Friday of next week, not the one in two days.
        return today - timedelta(days=today.weekday()) + timedelta(days=DAYS_A_WEEK + wd)
    return today + timedelta(days=(wd - today.weekday()) % DAYS_A_WEEK)  # the coming such weekday (0: today)


def _period(g: dict, today: date, tense: str, text: str) -> date | None:
    """ "next week", "this weekend", "last month", "next year", "this summer": the period's first day."""
    step = PERIOD_STEPS.get(g["pmod"].lower(), 0)
    per = g["per"]
    if per in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks=step)
        return monday + timedelta(days=SATURDAY if per == "weekend" else 0)
    if per == "month":
        return _shift(today.replace(day=1), step, "month")
    if per == "year":
        return date(today.year + step, 1, 1)
    found = date(today.year, SEASON_STARTS[per], 1)  # a season starts on the first day of its first month
    if step > 0 and found <= today:
        return found.replace(year=today.year + 1)
    if step < 0:
        return found.replace(year=today.year - (found >= today))
    return found


def _in_so_long(g: dict, today: date, tense: str, text: str) -> date | None:
    """ "in two weeks", "in 3 days' time", "in a month from now"."""
    return _shift(today, _num(g["n1"]), g["u1"])


def _so_long_ago(g: dict, today: date, tense: str, text: str) -> date | None:
    """ "two years ago"."""
    return _shift(today, -_num(g["n2"]), g["u2"])


def _for_so_long(g: dict, today: date, tense: str, text: str) -> date | None:
    """ "for five years", "for the past two months": a start, but only in the perfect ("I've lived here for
    five years"); None otherwise."""
    if not PERFECT.search(text):
        return None
    return _shift(today, -_num(g["n3"]), g["u3"])


def _month(g: dict, today: date, tense: str, text: str) -> date | None:
    """ "since March", "in May 2024", "next June", "early April": the month's first day."""
    month = MONTHS[g["m3"].rstrip(".").lower()]
    shift = {"next": "future", "last": "past"}.get(g["mmod"].lower(), tense)
    return _month_day(today, month, 1, g["y3"], shift)


def _year(g: dict, today: date, tense: str, text: str) -> date | None:
    """ "in 2019", "since 2020": the year's first day."""
    return date(int(g["y4"]), 1, 1)


# Each of DATE_RE's forms by a group only it sets, with its resolver and, when the form fixes it, its modifier.
RESOLVERS: tuple[tuple[str, Resolver, str | None], ...] = (
    ("rel2", _day_after_or_before, None),
    ("iso", _iso_day, None),
    ("m1", _day_of_month, None),
    ("m2", _day_of_month, None),
    ("rel", _named_day, None),
    ("wd", _weekday, None),
    ("wd2", _weekday, None),
    ("per", _period, None),
    ("n1", _in_so_long, None),
    ("n2", _so_long_ago, None),
    ("n3", _for_so_long, "since"),
    ("m3", _month, None),
    ("y4", _year, None),
)


def _modifier(g: dict) -> str:
    """ "since", "until" or "", from the preposition before a month or a year ("since March", "by 2020")."""
    mod = (g["mmod"] or g["ymod"] or "").lower()
    return "since" if mod in ("since", "from") else "until" if mod in ("until", "till", "by") else ""


def find_date(text: str, today: date, tense: str = "present") -> tuple[date | None, tuple[int, int] | None, str]:
    """The first date expression in `text`, resolved against `today`.

    Returns (date, span, modifier). `tense` is "future", "past" or "present" and decides the ambiguous
    cases: a bare "Friday" or "March 3". The modifier is "since", "until" or "" so the caller knows whether
    the date starts or ends the fact. A period ("next month", "last year", "in 2019") resolves to its first
    day: the extractor keeps day precision and says so rather than inventing a finer date. A date that would
    fall outside years 1 to 9999 ("tomorrow" said on 9999-12-31) is not resolved.
    """
    for m in DATE_RE.finditer(text):
        g = m.groupdict()
        for group, resolve, modifier in RESOLVERS:
            if g[group]:
                try:
                    found = resolve(g, today, tense, text)
                except (OverflowError, ValueError):  # past the years a date holds ("tomorrow" on 9999-12-31)
                    found = None  # left unresolved, as a date that is no date: the item is still read
                if found:
                    return found, m.span(), _modifier(g) if modifier is None else modifier
                break
    return None, None, ""
