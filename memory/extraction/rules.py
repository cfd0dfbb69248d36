"""Word lists, date arithmetic and the grammar (regular expressions) of the rule-based fact extractor.

memory/extraction/extractor.py applies these patterns and turns matches into facts; keeping the patterns here lets the
word lists and rules grow without burying the logic that decides what counts as a fact. Everything here is
pure and deterministic: dates resolve against the item's own time, never the clock.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

# Relation words after "my": word -> attribute. For `relative` the word is also kept in the value
# ("Ana (cousin)"), since the attribute alone would lose it.
_REL = {
    "spouse": "husband wife spouse hubby",
    "partner": "partner boyfriend girlfriend fiance fiancé fiancee fiancée",
    "child": "son daughter kid child baby-girl baby-boy stepson stepdaughter sons daughters kids children",
    "sibling": "sister brother sibling twin sisters brothers siblings stepbrother stepsister",
    "parent": "mom mum mother dad father mommy daddy stepmom stepdad stepmother stepfather parents",
    "friend": "friend bff buddy friends",
    "colleague": "colleague coworker co-worker colleagues coworkers",
    "relative": "grandma grandmother grandpa grandfather granny grandson granddaughter aunt uncle cousin "
    "niece nephew mother-in-law father-in-law sister-in-law brother-in-law",
}
RELATIONS: dict[str, str] = {w.replace("-", " ") if w.startswith("baby") else w: attr
                              for attr, words in _REL.items() for w in words.split()}

PETS = set(
    "dog dogs puppy pup cat cats kitten kitty hamster rabbit bunny parrot bird budgie fish goldfish turtle turtles "
    "tortoise horse pony snake lizard gecko ferret chinchilla hedgehog cockatiel".split()
) | {"guinea pig"}
# A pet's value names the animal in its singular, so "my dogs Max and Rex" gives "Max (dog)" twice.
PET_SINGULAR = {"dogs": "dog", "cats": "cat", "turtles": "turtle", "pup": "puppy", "kitty": "cat"}

# Head nouns of job titles: "I'm a <title>" only counts when the phrase ends in one of these, because
# "I'm a big fan", "I'm a mess" and "I'm a mom" share the same grammar.
JOB_HEADS = (
    "engineer developer programmer designer architect scientist analyst consultant manager director teacher "
    "professor lecturer tutor nurse doctor physician surgeon dentist pharmacist therapist counselor counsellor "
    "psychologist psychiatrist lawyer attorney paralegal accountant banker economist journalist writer author "
    "editor reporter photographer illustrator animator musician singer actor actress dancer chef cook baker "
    "barista bartender waiter waitress cashier clerk receptionist secretary administrator officer firefighter "
    "paramedic pilot mechanic electrician plumber carpenter farmer veterinarian vet librarian researcher "
    "student intern founder co-founder cofounder ceo cto cfo coo vp president owner entrepreneur freelancer "
    "contractor technician specialist coordinator representative recruiter supervisor coach trainer "
    "instructor translator interpreter worker caregiver nanny soldier midwife optometrist physiotherapist "
    "tester sysadmin postdoc lead assistant associate salesperson marketer producer strategist"
).split()
# Leading words dropped from a title: they judge the person, they are not part of the title.
TITLE_NOISE = {"good", "great", "bad", "terrible", "proud", "real", "total", "decent", "busy", "happy", "tired"}

NATIONALITIES = set(
    "American British English Scottish Welsh Irish Canadian Mexican Brazilian Argentinian Argentine Chilean "
    "Colombian Peruvian Venezuelan Cuban Portuguese Spanish French German Italian Dutch Belgian Swiss Austrian "
    "Swedish Norwegian Danish Finnish Icelandic Polish Czech Slovak Hungarian Romanian Bulgarian Greek Turkish "
    "Russian Ukrainian Serbian Croatian Lithuanian Latvian Estonian Chinese Japanese Korean Vietnamese Thai "
    "Filipino Indonesian Malaysian Singaporean Indian Pakistani Bangladeshi Nepali Iranian Iraqi Israeli "
    "Lebanese Syrian Egyptian Moroccan Algerian Tunisian Nigerian Ghanaian Kenyan Ethiopian Australian".split()
)
INSTRUMENTS = "guitar piano violin cello drums bass ukulele flute saxophone sax trumpet clarinet harp banjo viola trombone".split()
SPORTS = (
    "tennis football soccer basketball baseball volleyball golf hockey rugby cricket badminton squash chess "
    "poker pickleball padel"
).split()
OUTINGS = (
    "hiking running swimming skiing surfing climbing fishing camping cycling biking bowling dancing kayaking "
    "sailing skating snowboarding jogging"
).split()
DIETS = {"vegetarian", "vegan", "pescatarian", "pescetarian", "gluten-free", "keto", "kosher", "halal"}

# Capitalised words that start sentences but never name a person; a subject must not be one of these.
NON_NAMES = set(
    "I Actually Also Well So Yeah Yes No Oh Hey Hi Hello Thanks Thank The This That These Those It He She They "
    "We You My Our Your His Her Their There Here Today Tomorrow Yesterday Tonight Now Then Last Next Since "
    "Maybe Just Still And But Or If When What Where Who Why How Which Everyone Everybody Nobody Someone "
    "Somebody Anyone Anybody Everything Nothing Something Life Work School Music Art Mom Dad Mum Mother "
    "Father Family People Kids Children Friends Parents God Sure Cool Wow Great Nice Awesome Good Ok Okay "
    "Sorry Please Btw Update Correction Note Reminder Also Honestly Guess Lol Haha Monday Tuesday Wednesday "
    "Thursday Friday Saturday Sunday January February March April May June July August September October "
    "November December Christmas Easter One Two Both Each Every Some Many Most All Being Having".split()
)

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


def gerund(verb: str) -> str:
    """'paint' -> 'painting', 'dance' -> 'dancing', 'swim' -> 'swimming': "I love to paint" stores the
    activity the way people name it."""
    if verb.endswith("ing"):
        return verb
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")):
        return verb[:-1] + "ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", verb) and len(verb) <= 4:
        return verb + verb[-1] + "ing"
    return verb + "ing"


# ---- the grammar: subjects, verbs, values (read by memory/extraction/extractor.py) ----------------------------------

_CAP = r"[A-ZÀ-ÖØ-Þ][a-zà-öø-ÿ'’-]+"
NAME = rf"{_CAP}(?: {_CAP})?"
_alt = lambda words: "|".join(sorted(map(re.escape, words), key=len, reverse=True))  # noqa: E731
_RELW, _PETW = _alt(RELATIONS), _alt(PETS)
REL = rf"(?:(?:best|little|big|older|younger|baby|twin|elder|late|new|step-?) )?(?:ex-? ?)?(?:{_RELW})"
# A capitalised word after a preposition is a place or an object ("in Porto and I ..."), never a subject.
_NO_PREP = "".join(rf"(?<!\b{p} )" for p in "in at to from with of on by near into for".split())
SUBJ = (rf"(?P<subj>\b(?:I|[Ww]e)\b|{_NO_PREP}(?:{NAME} and (?:I|{NAME})\b|I and {NAME}|\b(?:[Mm]y|[Oo]ur) {REL},? "
        rf"{NAME},?|\b{NAME}(?:, (?:my|our) {REL},)?))")
ADV = (r"(?: (?:also|still|now|currently|actually|really|just|already|recently|finally|officially|always|even|"
       r"only|mostly|happily|truly|definitely|honestly|totally|absolutely|literally|both|all|originally|"
       r"basically|usually|often|kind of|sort of))*")
NEG = r"(?P<neg> (?:do|does|did) not| never| no longer| am not| is not| are not| have not| has not| cannot)?"
PRE = SUBJ + ADV + NEG + ADV
VAL = r"(?P<val>[^,.;!?()\"]{1,80})"
LIST = r"(?P<val>(?:(?!,\s*(?:but|and I|and we|so|because|which|though)\b)[^.;!?()\"]){1,120})"
_TITLE = (rf"(?i:(?:(?!(?:of|for|with|in|at|and|to|the|a|an|who|that|fan|not|no|mom|dad)\b)[\w-]+ ){{0,3}}"
          rf"(?:{_alt(JOB_HEADS)})(?: of [a-z]+)?)\b")
_POSS = rf"(?:[Mm]y|(?P<owner>{NAME})'s)"

# Words after which a value has ended: the rest of the sentence says something else.
_STOP = re.compile(
    r"\s(?:because|since|when|while|but|so|as|which|who|that|where|and (?:I|we|my|it|then|she|he|they)|until|"
    r"after|before|if|though|although|whenever|than|especially|with (?:my|you|the kids)|for (?:me|years|a while)|"
    r"every|each|on (?:the )?weekends?|at the moment|right now|these days|nowadays|anymore|any more|"
    r"any longer|lately|too|either|a lot|so much|very much|now|again|tbh|lol|haha|all day|instead|over|"
    r"not|rather|here|there|like|whose)\b.*", re.I)
_REJECT_START = set(
    "it that this these those them you your him her his us me my our their how what when where why who which "
    "whether being to seeing hearing talking chatting hanging spending the way the idea the fact everything "
    "anything nothing something everyone all so lots working doing having getting".split())
_VERBISH = re.compile(r"\b(?:is|are|was|were|am|be|been|has|have|had|do|does|did|can|will|it's|i|we|'s)\b", re.I)
_HYPO = re.compile(
    r"\b(?:if|unless|suppose|supposing|imagine|wish|would|could|might|maybe|perhaps|possibly|probably|whether|"
    r"someday|hope|hoping|hopefully|pretend|wonder|wondering|should|considering|thinking (?:about|of)|"
    r"dream(?:ing)? (?:of|about)|not sure|ask(?:ed|ing|s)?|want(?:s|ed)? to know|wants? to|wanted to|"
    r"need to|have to|try(?:ing)? to|rather|think|guess)\b", re.I)
_CORRECTION = re.compile(r"^(?:actually|correction|sorry|oops|to correct|i was wrong|i misspoke)\b|\bi meant\b|"
                         r", not [A-Za-z]|\binstead of\b", re.I)
_PAST_STATE = re.compile(r"^(?:lived|resided|worked|used to \w+|was employed|was|were|studied|attended|"
                         r"graduated|had)$")
_FUTURE = re.compile(r"\b(?:will|going|planning|plan|moving|flying|heading|leaving|starting|turning|"
                     r"scheduled|due|about)\b")
_PAST = re.compile(r"\b(?:\w+ed|was|were|got|left|quit|began|became|took|went|joined|had|turned|grew|met|"
                   r"lost|broke|split|found|moved)\b")
_BARE = set("live work love like enjoy hate are have do am study play speak go plan intend reside come adore "
            "dislike prefer turn attend detest".split())
_THIRD = set("lives works loves likes enjoys hates is has does studies plays speaks goes plans intends resides "
             "comes adores dislikes prefers turns attends detests".split())
EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
PHONE = r"\+?\(?\d[\d ().-]{5,}\d"


def _rx(attr: str, pattern: str, kind: str, **opts) -> tuple[str, re.Pattern, str, dict]:
    return attr, re.compile(pattern), kind, opts


_LIVE = (r"live|lives|lived|living|reside|resides|resided|am living|is living|are living|have been living|"
         r"has been living|have lived|has lived|used to live|am based|is based|are based|moved|relocated|"
         r"have moved|has moved|am moving|is moving|are moving|will move|will be moving|am going to move|am relocating|"
         r"is going to move|are going to move|settled|have settled")
_WORK = (r"work|works|worked|am working|is working|are working|have been working|has been working|have worked|"
         r"has worked|used to work|am employed|is employed|was employed|will be working|will work")

# Generic rules: a subject, a verb (group v), a value of a kind. Options: ended (always ends), dated (takes a
# date from the sentence, default True), tense (how to read bare dates), neg ("flip" turns a negated like
# into a dislike).
RULES = [
    _rx("home_city", PRE + rf" (?P<v>{_LIVE})(?: back)?(?: from {NAME})? (?:in|to|over to|out to|down to|up to) "
        + VAL, "place"),
    _rx("hometown", PRE + r" (?P<v>am|is|are|come|comes|came)(?: originally)? from " + VAL, "place"),
    _rx("hometown", PRE + r" (?P<v>grew up|was born|was raised|were born|were raised) in " + VAL, "place"),
    _rx("employer", PRE + rf" (?P<v>{_WORK}) (?:at|for|by) " + VAL, "org_lc"),
    _rx("employer", PRE + r" (?P<v>joined|have joined|has joined|will join|am joining|is joining|started at|"
        r"will start at|am starting at|started working at|started working for|began working at|got hired at|"
        r"got hired by|was hired by|have been hired by|was recruited by) " + VAL, "org"),
    _rx("employer", PRE + r" (?P<v>got|landed|accepted|started|began|have|has|found|took|am starting|will start)"
        r" (?:a |an |my |the )?(?:new |first |dream |full-time |part-time )?(?:job|position|role|internship)"
        r"(?: as (?:a |an )?(?P<title>[\w -]+?))? (?:at|with) " + VAL, "org"),
    _rx("employer", PRE + r" (?P<v>quit|left|lost) (?:my|his|her|their) (?:\w+ )?(?:job|position|role)"
        r"(?: (?:at|with) " + VAL + ")?", "org", ended=True),
    _rx("employer", PRE + r" (?P<v>resigned|retired|was laid off|got laid off|have been laid off|was let go|"
        r"got let go|was fired|got fired)(?: from " + VAL + r"|(?=\s*(?:[,.;!]|$| (?:yesterday|today|last|this|on"
        r"|in|after|because|and)\b)))", "org", ended=True),
    _rx("job_title", PRE + r" (?P<v>am|is|are|was|used to be|have been|has been|became|become|will be|"
        r"got promoted to|was promoted to|have been promoted to|has been promoted to)(?P<neg2> no longer| not)?(?: (?:now|currently|"
        rf"still|also|finally|officially))? (?:a |an |the )?(?P<val>{_TITLE})(?: (?:at|for|with) (?P<org>"
        r"[^,.;!?()\"]{1,60}))?", "title"),
    _rx("job_title", PRE + r" (?P<v>work|works|worked|am working|is working|have worked|has worked|"
        r"started|start|began) as (?:a |an |the )?(?P<val>(?:[\w-]+ ){0,3}?[\w-]+)(?: (?:at|for|with) "
        r"(?P<org>[^,.;!?()\"]{1,60}))?(?=\s*(?:[,.;!]|$| (?:since|for|in|and|but|now|because)\b))", "title"),
    _rx("job_title", _POSS + r" (?:job|job title|title|role|position) (?P<v>is) (?:a |an |the )?" + VAL, "np"),
    _rx("school", PRE + r" (?P<v>study|studies|studied|am studying|is studying|am a student|is a student|"
        r"was a student|am doing (?:a|my) [\w']+(?: degree)?|graduated|will graduate|am graduating|"
        r"teach|teaches)(?: [a-z]+(?: [a-z]+){0,2})? (?:at|from) " + VAL, "org"),
    _rx("school", PRE + r" (?P<v>go|goes|attend|attends|attended|am attending|is attending|am enrolled|"
        r"is enrolled|got into|was accepted to|got accepted to)(?: to| at| in)? " + VAL, "school"),
    _rx("likes", PRE + r" (?P<v>love|loves|like|likes|enjoy|enjoys|adore|adores|am(?P<neg2> not| no longer)?(?: really| so| totally| very)? into|is(?P<neg3> not| no longer)?(?: really| so)? into|are into|"
        r"am obsessed with|is obsessed with|am passionate about|is passionate about|am a (?:big |huge |massive "
        r"|great |real )?fan of|is a (?:big |huge )?fan of|am fond of|is fond of|have always loved|has always "
        r"loved|have always liked|have always enjoyed|have a love for|have a passion for|prefer|prefers|used to "
        r"love|used to like|really love|really like) " + LIST, "list", dated=False, neg="flip"),
    _rx("dislikes", PRE + r" (?P<v>hate|hates|dislike|dislikes|detest|detests|cannot stand|can not stand|"
        r"am not a (?:big )?fan of|is not a (?:big )?fan of|am scared of|is scared of|am afraid of|is afraid of|"
        r"am terrified of|is terrified of) " + LIST, "list", dated=False, neg="skip"),
    _rx("likes", rf"(?:\b[Mm]y|\b(?P<owner>{NAME})'s) (?P<v>favou?rite) (?:[a-z]+ ){{0,2}}(?:is|are|has to be) "
        + VAL, "np", dated=False),
    _rx("likes", r"(?:^|[,;:] |\b(?:and|but|so) )(?P<val>(?:[\w-]+ ){0,2}[\w-]+) (?P<v>is|are) (?:my|our) (?:absolute "
        r"|all-time )?favou?rites?(?: thing)?(?=\s*(?:[,.;!]|$))", "np", dated=False),
    _rx("likes", PRE + r" (?P<v>am|is) (?:a )?(?:big |huge |massive |die-hard |lifelong )?(?P<val>[A-Z][\w&'.]*(?: "
        r"[A-Z][\w&'.]*){0,2}) (?:fan|supporter)\b", "np", dated=False),
    _rx("hobby", rf"(?:\b[Mm]y|\b(?P<owner>{NAME})'s) (?:favou?rite |main |new )?(?P<v>hobby|hobbies|pastime|"
        r"pastimes) (?:is|are|include|includes) " + LIST, "list", dated=False),
    _rx("hobby", r"(?:^|[,;:] |\b(?:and|but|so) )(?P<val>(?:[\w-]+ ){0,2}[\w-]+) (?P<v>is) (?:my|a) (?:favou?rite"
        r" |big |new )?(?:hobby|pastime)", "np", dated=False, me=True),
    _rx("hobby", PRE + r" (?P<v>play|plays|have been playing|has been playing|have played|has played|am "
        r"learning(?: to play)?|is learning(?: to play)?|learned to play) (?:the )?(?P<val>"
        + _alt(INSTRUMENTS + SPORTS + ["video games", "board games"]) + r")\b", "np"),
    _rx("hobby", PRE + rf" (?P<v>go|goes|love going|like going|enjoy going) (?P<val>{_alt(OUTINGS)})\b",
        "np", dated=False),
    _rx("hobby", r"\b[Ii]n (?:my|our) (?:free|spare) time,? (?:(?P<subj>I|we) )?(?P<v>)(?:like to |love to |"
        r"enjoy |usually |often |mostly )*" + LIST, "verbs", dated=False, me=True),
    _rx("hobby", PRE + r" (?P<v>took up|have taken up|has taken up) " + VAL, "np"),
    _rx("plan", PRE + r" (?P<v>am planning|is planning|are planning|plan|plans|intend|intends|have planned|"
        r"has planned|am planning on|are planning on) (?:on |to |(?=(?:a|an) (?:trip|vacation|holiday|party|"
        r"visit|move|wedding|surprise)\b))" + VAL, "plan", tense="future"),
    _rx("plan", PRE + r" (?P<v>am going|is going|are going|will|am scheduled|is scheduled|am due|is due|am about)"
        r" (?:to )?" + VAL, "plan", tense="future", need_date=True),
    _rx("plan", PRE + r" (?P<v>am|is|are) (?P<val>(?:flying|travell?ing|heading|driving|visiting|leaving for|"
        r"going on|going back to|taking|having|hosting|attending|running|starting|getting married|getting|throwing|"
        r"celebrating) [^,.;!?()\"]{1,60})", "plan_ing", tense="future", need_date=True),
    _rx("plan", r"\b(?P<subj>I|[Ww]e) (?P<v>have|have got|got) (?:a|an|my|the|our) (?P<val>(?:[\w'-]+ ){0,3}?"
        r"(?:appointment|interview|exam|meeting|flight|trip|surgery|wedding|concert|party|test|conference|"
        r"recital|game|match|race|marathon|vacation|holiday|presentation|audition|check-?up|competition|"
        r"tournament)(?: (?:to|in|with|at) [^,.;!?]{1,30}?)?)(?= (?:on|next|this|tomorrow|tonight|today|in|at)\b)",
        "plan", tense="future", need_date=True),
    _rx("plan", _POSS + r" (?P<val>(?:[\w-]+ ){0,2}(?:appointment|interview|exam|flight|trip|surgery|wedding|"
        r"concert|party|vacation|holiday|move|presentation|audition|competition|tournament|race|marathon)"
        r"(?: (?:to|in|with|at) [A-Za-z][\w -]{0,25}?)?) (?P<v>is|will be|starts|begins)(?= (?:on|in|next|"
        r"this|tomorrow|today|tonight)\b)", "plan", tense="future", need_date=True),
    _rx("age", PRE + r" (?P<v>am|is|are|will be|am turning|is turning|turned|turn|turns|will turn|just turned)"
        r" (?P<val>\d{1,3})(?P<yo> years? old| years? of age| yo| y/o)?(?=\s*(?:[,.;!]|$|\b(?:and|but|now|"
        r"today|tomorrow|next|this|last|on|in|since|yesterday|so)\b))", "age"),
    _rx("nationality", PRE + r" (?P<v>am|is|are)(?: (?:a|an|proudly|fully))? (?P<val>(?:" + "|".join(
        NATIONALITIES) + r")(?:-(?:" + "|".join(NATIONALITIES) + r"))?)(?: citizen)?\b(?! (?:food|cuisine|"
        r"restaurant|movies?|music|films?|class|lessons?|teacher|language|speaker|culture|wine|literature|"
        r"guy|girl|dishes))", "np", dated=False),
    _rx("language", PRE + r" (?P<v>speak|speaks|am fluent in|is fluent in|am a native speaker of|is a native "
        r"speaker of)(?: fluent| some| a little| basic| conversational| native)? (?P<val>[A-Z][a-z]+"
        r"(?:(?:, | and | or |, and )[A-Z][a-z]+)*)", "list", dated=False),
    _rx("allergy", PRE + r" (?P<v>am|is|are) (?:severely |very |deathly |mildly )?allergic to " + LIST,
        "list", dated=False),
    _rx("allergy", r"\b(?P<subj>I|[Ww]e|" + NAME + r") (?P<v>have|has) (?:a |an )?(?:severe |mild |bad )?"
        r"(?P<val>[a-z]+(?: [a-z]+)?) allergy", "np", dated=False),
    _rx("diet", PRE + r" (?P<v>am|is|are|have been|has been|became|went|have gone|turned)(?P<neg2> no longer| not)?(?: (?:a|an))? "
        r"(?:strict |full |fully )?(?P<val>" + _alt(DIETS) + r")\b(?! (?:food|restaurants?|recipes?|dish|"
        r"dishes|options?|meals?|place|cafe|café|friendly|cooking))", "np"),
    _rx("name", rf"\b[Mm]y name (?P<v>is) (?P<val>{NAME})\b|\b(?:[Cc]all me|I go by) (?P<val2>{NAME})\b", "name",
        dated=False, me=True),
]


_RELSCAN = [
    re.compile(rf"(?:\b(?:[Mm]y|[Oo]ur)|\b(?P<owner>{NAME})'s) (?P<mod>(?:best|little|big|older|younger|baby|"
               rf"twin|elder|late|new|old|step-?) )?(?P<ex>ex-? ?)?(?P<rel>{_RELW}|{_PETW}),? (?:(?:named|called) )?"
               rf"(?P<names>{NAME}(?:(?:,? (?:and|&) |, ){NAME})*)"),
    re.compile(rf"\b(?P<names>{NAME}),? (?:is|was) (?:my|our) (?P<mod>(?:best|little|big|older|younger|baby|twin|"
               rf"elder|late|new) )?(?P<ex>ex-? ?)?(?P<rel>{_RELW}|{_PETW})\b(?!'s| (?:of|from|at|in)\b)"),
    re.compile(rf"\b(?P<subj>I|[Ww]e|(?:[Mm]e|I) and (?:my {REL} )?{NAME}|(?:[Mm]y {REL} )?{NAME} and (?:I|me)|{NAME})"
               rf" (?P<v>have|has|had|got|adopted|rescued|just got|just adopted|welcomed)"
               rf" (?:a|an|one|two|three|\d) (?:new |little |baby |rescue |older |younger |twin )?(?P<rel>{_RELW}|"
               rf"{_PETW})(?:(?: (?:named|called) |, |: )(?P<names>{NAME}(?:(?:,? (?:and|&) |, ){NAME})*))?(?=\s*(?:[,.;!]|$"
               r"| (?:named|called|and|who|that|which|at|in|on|since|last|this|yesterday|today|recently|now|too)\b))"),
    re.compile(rf"(?:\b(?:[Mm]y|[Oo]ur)|\b(?P<owner>{NAME})'s) (?P<rel>{_RELW}|{_PETW})(?:'s name is| is called| is named) (?P<names>{NAME})"),
]
_COUPLE = {"married": "spouse", "divorced": "spouse", "engaged": "partner", "dating": "partner",
           "seeing": "partner", "broke": "partner", "split": "partner", "separated": "spouse"}
_COUPLE_RX = [
    re.compile(PRE + r" (?P<v>married|am married to|is married to|got married to|have been married to|has been "
               r"married to|got engaged to|am engaged to|is engaged to|am dating|is dating|have been dating|has been"
               r" dating|am seeing|broke up with|split up with|split from|divorced|got divorced from|am divorced from"
               rf"|separated from) (?P<val>{NAME})\b"),
    re.compile(PRE + r" (?P<v>got married|are married|married|got engaged|are engaged|are dating|have been dating|"
               r"broke up|split up|got divorced|divorced|separated)\b"),
]
_CONTACT = re.compile(rf"(?:\b[Mm]y|\b(?P<owner>{NAME})'s) (?:new |work |personal |home |private |current |cell |"
                      r"mobile )?(?P<what>e-?mail(?: address)?|address|phone(?: number)?|number|cell(?: number)?|"
                      r"mobile(?: number)?|cellphone|telephone(?: number)?) (?:is now|is|has changed to|changed to|"
                      r"will be|:) (?P<val>[^!?;]+)")
_REACH = re.compile(rf"\b(?:[Ee]-?mail|[Rr]each|[Cc]ontact|[Ww]rite to|[Tt]ext|[Cc]all|[Rr]ing) (?P<who>me|{NAME}) "
                    r"(?:at|on|via) (?P<val>[^!?;]+)")
_BDAY = [
    re.compile(rf"(?:\b[Mm]y|\b(?P<owner>{NAME})'s) birthday(?:'s| is| falls on| was| will be)(?: on)? (?P<val>[^,;!?]+)"),
    re.compile(rf"\b(?P<subj>I|{NAME}) (?:was|were) born on (?P<val>[^,;!?]+)"),
    re.compile(r"\b(?P<val>[Tt]oday|[Tt]omorrow|[Yy]esterday) (?:is|was) my birthday|\b[Ii]t(?:'s| is) my birthday "
               r"(?P<val2>today|tomorrow)"),
]
