"""Rule-based fact extraction: the default extractor of the background read.

`extract(text, author=..., at=..., end_user=...)` turns everyday statements ("I moved to Lisbon last year",
"My sister Jane works at Google", "I'm allergic to peanuts") into dated (subject, attribute, value) facts.
It is pure, deterministic and fast (regular expressions over short sentences; no model, no network), so a
re-read of the same item yields the same facts.

Precision is preferred to recall: a wrong fact in memory misleads every later answer, a missing one only
fails to help. So questions, hypotheticals, quoted speech, unnamed third parties ("she", "my boss") and
values that do not look like what the attribute holds are skipped rather than guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime

from memory.extraction import rules as L
from memory.extraction.rules import (  # the grammar lives there; this file applies it
    EMAIL, NAME, PHONE, REL, RULES, _BARE, _BDAY, _CONTACT, _CORRECTION, _COUPLE, _COUPLE_RX, _FUTURE, _HYPO,
    _PAST, _PAST_STATE, _REACH, _REJECT_START, _RELSCAN, _STOP, _THIRD, _TITLE, _VERBISH,
)


@dataclass(frozen=True)
class Attribute:
    name: str
    single: bool  # True: a new value supersedes (ends) the current one; False: values accumulate
    about: str


# The one table of attributes: the extractor, the fact store and the docs all read it from here.
ATTRIBUTES: dict[str, Attribute] = {a.name: a for a in (
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
)}


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


# ---- values --------------------------------------------------------------------------------------------

_CAPW = r"[A-ZÀ-ÖØ-Þ][\w'’&-]*"


def _bad_word(w: str) -> bool:
    return w in L.NON_NAMES or w.lower() in L.MONTHS


def _place(v: str) -> str:
    """Leading capitalised words: 'Lisbon next month' -> 'Lisbon'; 'Rio de Janeiro' stays whole."""
    m = re.match(rf"(?:the )?({_CAPW}(?: (?:(?:of|de|do|da|dos|das|del|la|le) )?{_CAPW})*)", v)
    words = m.group(1).split() if m else []
    while words and (_bad_word(words[-1]) or words[-1] in ("of", "de", "do", "da", "del")):
        words.pop()
    return "" if not words or _bad_word(words[0]) or words[0] in L.NATIONALITIES else " ".join(words)


def _org(v: str, lowercase_ok: bool) -> str:
    """A capitalised name ('Acme Corp', 'Bank of America'), or with lowercase_ok a short common noun phrase
    after an article ('a local bakery' -> 'local bakery')."""
    m = re.match(rf"(?:the )?({_CAPW}(?: (?:(?:of|for|and|&|de) )?[A-Z0-9][\w'’&.-]*)*)", v)
    if m:
        words = m.group(1).split()
        while words and (_bad_word(words[-1]) or words[-1] in ("of", "for", "and", "&", "de")):
            words.pop()
        return "" if not words or _bad_word(words[0]) else " ".join(words)
    m = re.match(r"(?:a|an|the) ([a-z][\w-]*(?: [a-z][\w-]*){0,3})", v) if lowercase_ok else None
    if not m:
        return ""
    words = re.split(r" (?:in|on|near|as|since|for|with|where|which|that|and|but|because|from|during|until|"
                     r"while|when|so|every|last|next|this|downtown|now)\b", " " + m.group(1))[0].split()
    value = " ".join(words)
    return "" if not words or value in ("moment", "weekend", "time", "living") else value


# "I love the beach" is a taste; "I love the colour" is a reaction to something on screen. Only these
# generic things keep their "the".
_GENERIC_THE = set("beach ocean sea mountains outdoors sun snow rain city countryside summer winter spring autumn "
                   "fall theatre theater cinema movies opera ballet gym water sunsets sunrises forest woods "
                   "outdoors stars night".split())
_RELATIVE = {"that", "which", "who", "whose", "where", "when"}
_NOT_BEFORE_SUBJECT = set("in at to from for with of on by near into visit visited about than things thing one ones "
                          "stuff what everything anything something people place places way person whatever".split())


def _np(v: str, likes: bool = False) -> str:
    """A short noun phrase: cut at the first word that starts another clause, drop dates and articles.
    Empty when the words are not a self-contained thing ("stories that tackle...", "it", "the colour")."""
    v = " " + v
    if (stop := _STOP.search(v)) and stop.group(0).split()[0].lower() in _RELATIVE:
        return ""  # "I love stories that tackle important issues": the clause is the point, not "stories"
    v = v[: stop.start()] if stop else v
    dm = L.DATE_RE.search(v)
    v = (v[: dm.start()] if dm else v).strip(" -–—:'\"")
    v = re.sub(r"\s+(?:and stuff|and things|and all|as well|at all|so|really)$", "", v)
    v = re.sub(r"\s+[A-Z][a-z]+$", "", v) if re.match(r"[a-z]", v) else v  # "the thought Nate": vocative
    words = v.split()
    if likes and words and words[0].lower() == "the" and (len(words) != 2 or words[1].lower() not in _GENERIC_THE):
        return ""
    v = re.sub(r"^(?:the|a|an|some|any|both)\s+", "", v, flags=re.I)
    words = v.split()
    if not words or len(words) > 6 or " ".join(words[:2]).lower() in _REJECT_START or words[0].lower() in \
            _REJECT_START or _VERBISH.search(v) or words[-1].lower() in _NOT_BEFORE_SUBJECT or re.search(
            r"\b(?:you|your|yours|him|her|them|it|this|that|they|he|she|myself|me)\b", v, re.I):
        return ""
    return v


def _list(v: str, likes: bool = False) -> list[str]:
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
            piece = L.gerund(m.group(1)) + m.group(2)
        value = _np(piece, likes)
        if not value or (i and len(value.split()) > 3):
            return []
        out.append(value)
    return out


def _person(name: str | None) -> str | None:
    """Title case for names, so 'alice' and 'Alice' are one subject; ids like 'u_42' are kept as given."""
    name = (name or "").strip()
    if not name:
        return None
    if re.fullmatch(r"[^\W\d_]+(?:[ '.-][^\W\d_]+)*", name):
        return " ".join(w[:1].upper() + w[1:] for w in name.split())
    return name


def _name(raw: str) -> str | None:
    """A candidate name with leading non-names dropped ('Yesterday Alice' -> 'Alice'); None if none is left."""
    words = re.sub(r"'s?$", "", raw.strip(" ,")).split()
    if words and (words[0].lower() in L.RELATIONS or words[0].lower() in L.PETS):
        return None  # "Grandpa", "Mom": a relation, not a name
    while words and (_bad_word(words[0]) or words[0] in L.NATIONALITIES):
        words.pop(0)
    return _person(" ".join(words)) if words and not _bad_word(words[-1]) else None


def _subjects(raw: str | None, me: str | None) -> list[str]:
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
    return [x for x in (me if p == "I" else _name(p) for p in parts) if x]


class _Ctx:
    def __init__(self, s: str, me: str | None, today: date):
        self.s, self.me, self.today = s, me, today
        self.correction = bool(_CORRECTION.search(s))

    def fact(self, subject: str, attribute: str, value: str, when: date | None = None, ended: bool = False):
        value = re.sub(r"\s+", " ", value).strip(" '\"").rstrip(".,;:!-–—")
        return Fact(subject, attribute, value, None if ended else when, when if ended else None, ended,
                    self.correction, self.s) if value or ended else None

    def gated(self, start: int, end: int) -> bool:
        """True when the match sits in a conditional/hypothetical or inside quoted speech."""
        cut = re.search(r"[,;:!?.]| but ", self.s[end:])
        return bool(_HYPO.search(self.s, 0, end + (cut.start() if cut else len(self.s)))) or \
            self.s.count('"', 0, start) % 2 == 1

    def date_for(self, m: re.Match, tense: str) -> tuple[date | None, str]:
        """The date in the match's clause, else in the words leading up to it ('On March 3, I ...')."""
        s = self.s
        lo = max([0] + [x.end() for x in re.finditer(r"[,;]| and | but ", s[: m.start()])])
        hi = m.end() + (c.start() if (c := re.search(r"[,;]| and | but ", s[m.end():])) else len(s))
        for text in (s[lo:hi], s[: m.start()]):
            found, _span, mod = L.find_date(text, self.today, tense)
            if found:
                return found, mod
        return None, ""


def _generic(rule, m: re.Match, ctx: _Ctx) -> list[Fact]:
    attr, _rx_, kind, opts = rule
    g, s = m.groupdict(), ctx.s
    if ctx.gated(m.start(), m.end()):
        return []
    v, raw = (g.get("v") or "").strip(), g.get("subj")
    neg = " ".join(x.strip() for x in (g.get("neg"), g.get("neg2"), g.get("neg3")) if x)
    if g.get("owner"):
        subjects = [x for x in [_name(g["owner"])] if x]
    elif raw is None:  # "my favourite ...", "In my free time ...": the speaker
        subjects = [ctx.me] if ctx.me else []
    else:
        subjects = _subjects(raw, ctx.me)
        before = s[: m.start("subj")].split()[-1:]
        if before and before[0].lower() in _NOT_BEFORE_SUBJECT:
            return []  # "in Porto and I", "the things I love": not the subject of the verb
    if not subjects:
        return []
    first = v.split()[0] if v else ""
    single_name = raw and raw.strip(" ,") not in ("I", "we", "We") and " and " not in raw
    if not neg and ((single_name and first in _BARE) or (raw == "I" and first in _THIRD)):
        return []  # "Kids love the beach" is not about a person called Kids
    ended = bool(opts.get("ended") or _PAST_STATE.match(v) or "no longer" in neg or (
        neg and re.search(r"\bany ?(?:more|longer)\b", s[m.start():])))
    if neg and not ended:
        if opts.get("neg") != "flip":
            return []
        attr = "dislikes"
    val = g.get("val") or g.get("val2") or ""
    extra: list[tuple[str, str]] = []
    if kind == "place":
        values = [_place(val)]
    elif kind in ("org", "org_lc"):
        org = _org(val, kind == "org_lc") if val else ""
        after = val[len(org):len(org) + 40] if org else ""
        if (val and not org) or re.search(r"\b(?:club|group|team|class|community|gym|church|choir|league|band|"
                                          r"course|program|support|meetup|workshop)\b", after):
            return []
        if re.search(r"\bstart(?:ed|ing)? at\b", v) and raw != "I":
            return []  # "Mia just started at Oxford" is as likely a school as a job
        values = [org]
        if g.get("title") and (t := _np(g["title"])):
            extra.append(("job_title", t))
        elif org and (t := re.search(rf"\bas (?:a |an |the )?({_TITLE})", val[len(val.split(org)[0]) + len(org):])):
            extra.append(("job_title", t.group(1)))
    elif kind == "title":
        title = " ".join(w for i, w in enumerate(val.split()) if i or w.lower() not in L.TITLE_NOISE)
        title = title if len(title.split()) <= 5 and not _VERBISH.search(title) else ""
        org = _org(g.get("org") or "", True) if g.get("org") else ""
        if not title:
            return []
        if title.lower().endswith("student") and org:
            attr, values = "school", [org]
        else:
            values = [title]
            if org:
                extra.append(("employer", org))
    elif kind == "school":
        org = _org(val, False)
        ok = re.search(r"\b(?:University|College|School|Academy|Institute|Uni|High|Polytechnic|Conservatory)\b",
                       org) or re.fullmatch(r"[A-Z]{2,6}", org)
        values = [org] if ok else []
    elif kind in ("list", "verbs"):
        values = _list(val, likes=attr in ("likes", "dislikes"))
        if kind == "verbs":
            values = [re.sub(r"^go ", "", x) for x in values]
            values = [x if x.split()[0].endswith("ing") or " " in x and x.split()[0] in ("the", "a") else
                      L.gerund(x.split()[0]) + x[len(x.split()[0]):] for x in values]
    elif kind in ("plan", "plan_ing"):
        values = [_plan(val, v)]
    elif kind == "age":
        n = int(val)
        relative = re.match(r"(?:[Mm]y|[Oo]ur) ", raw or "")
        if not 0 < n < 120 or (single_name and not relative and not g.get("yo") and "turn" not in v):
            return []
        values = [str(n)]
    elif kind == "address":
        values = [re.split(r" (?:since|now|with|because|and I)\b|, which", val)[0].strip(" .")]
    else:
        values = [_np(val, likes=attr == "likes")]
    values = [x for x in values if x or (ended and kind in ("org", "org_lc"))]
    if not values:
        return []
    when = None
    if opts.get("dated", True):
        tense = opts.get("tense") or ("future" if _FUTURE.search(v) else "past" if _PAST.search(v) else "present")
        when, mod = ctx.date_for(m, tense)
        if mod == "until" and not ended:
            when = None
        if opts.get("need_date") and (when is None or when < ctx.today):
            return []
    return [f for who in subjects for a, x in [(attr, x) for x in values] + extra
            if (f := ctx.fact(who, a, x, when, ended))]


_PLAN_SKIP = set("be have say tell let see do get need think keep miss stop send give check ask call text make come "
                 "help find know look talk wait move moving relocate join turn go".split())


def _plan(val: str, v: str) -> str:
    """The plan in a few words, its date removed: 'going to Paris next week' -> 'trip to Paris'."""
    val = L.DATE_RE.sub("", val)
    val = _STOP.sub("", " " + val).strip()
    val = re.sub(r"\s+(?:on|in|at|for|this|next)$", "", re.sub(r"\s+", " ", val)).strip()
    val = re.sub(r"^(?:a|an) ", "", val)
    words = val.split()
    if not words or len(words) > 8 or re.search(r"\b(?:you|your|it|that|this|them|us|there|him|her|me)\b", val, re.I):
        return ""
    if words[0][0].isupper() and "going" in v:
        return f"trip to {_place(val)}" if _place(val) else ""
    if words[0] in ("the", "a", "an", "my") and "going" in v:
        return "go to " + val
    if words[0].lower() in _PLAN_SKIP or re.match(r"(?:starting|start) (?:at|with|as)\b", val):
        return ""
    return val


def _relations(ctx: _Ctx) -> list[Fact]:
    """'my sister Jane', 'Tom is my brother', 'I have a dog named Max', 'Alice's husband Tom'."""
    out = []
    for rx in _RELSCAN:
        for m in rx.finditer(ctx.s):
            g = m.groupdict()
            if ctx.gated(m.start(), m.end()):
                continue
            subj = g.get("subj") or ""
            shared = re.search(r"\b(?:I|[Mm]e)\b", subj)  # "Me and my boyfriend Theo got a kitten": ours
            owner = _name(g["owner"]) if g.get("owner") else ctx.me if shared or not subj else (
                _subjects(subj, ctx.me) or [None])[0]
            rel = g["rel"].lower()
            names = [n for n in (_name(x) for x in re.split(r",? (?:and|&) |, ", g.get("names") or "")) if n]
            if not owner or (rel not in L.PETS and not names):
                continue
            if rel not in L.PETS and not rel.endswith(("s", "ren")):
                names = names[:1]  # "my sister Jane and Tom": only Jane is the sister
            pet = L.PET_SINGULAR.get(rel, rel)
            ended = bool(g.get("ex") or (g.get("mod") or "").strip() == "late" or g.get("v") == "had" or (
                rel in L.PETS and re.search(r"\b(?:died|passed away|ran away|put down|passed)\b", ctx.s)))
            when = ctx.date_for(m, "past")[0] if rel in L.PETS and (g.get("v") or ended) else None
            if rel in L.PETS:
                values = [f"{n} ({pet})" for n in names] or [pet]
                out += [ctx.fact(owner, "pet", x, when, ended) for x in values]
                continue
            attr = L.RELATIONS[rel]
            values = [f"{n} ({rel})" if attr == "relative" else n for n in names]
            out += [ctx.fact(owner, attr, x, None, ended) for x in values if _person(x) != owner]
    for i, rx in enumerate(_COUPLE_RX):
        for m in rx.finditer(ctx.s):
            g = m.groupdict()
            people = _subjects(g["subj"], ctx.me)
            if ctx.gated(m.start(), m.end()) or g.get("neg") or not ctx.me or ctx.me not in people:
                continue
            other = _name(g["val"]) if i == 0 else next((p for p in people if p != ctx.me), None)
            if i == 0 and people != [ctx.me] or not other:
                continue
            key = next(k for k in _COUPLE if k in g["v"])
            ended = key in ("divorced", "broke", "split", "separated")
            when = ctx.date_for(m, "past")[0]
            out.append(ctx.fact(ctx.me, _COUPLE[key], other, when, ended))
    return [f for f in out if f]


def _contacts(ctx: _Ctx) -> list[Fact]:
    """Email, phone and postal address, only when the statement says whose they are."""
    out = []
    for rx in (_CONTACT, _REACH):
        for m in rx.finditer(ctx.s):
            g = m.groupdict()
            who = ctx.me if g.get("who") == "me" or (rx is _CONTACT and not g.get("owner")) else _name(
                g.get("who") or g.get("owner") or "")
            val = g["val"].strip()
            if not who or ctx.gated(m.start(), m.start()):
                continue
            if em := re.match(EMAIL, val):
                out.append(ctx.fact(who, "contact_email", em.group(0).rstrip(".").lower()))
            elif (ph := re.match(PHONE, val)) and len(re.sub(r"\D", "", ph.group(0))) >= 7:
                out.append(ctx.fact(who, "phone", ph.group(0).strip()))
            elif rx is _CONTACT and g["what"] == "address" and re.match(r"\d", val):
                out.append(ctx.fact(who, "address", re.split(r" (?:since|now|because)\b", val)[0].strip(" .")))
    for i, rx in enumerate(_BDAY):
        for m in rx.finditer(ctx.s):
            g = m.groupdict()
            who = _name(g["owner"]) if g.get("owner") else (
                _subjects(g.get("subj"), ctx.me) or [None])[0] if g.get("subj") else ctx.me
            text = g.get("val") or g.get("val2") or ""
            if not who or ctx.gated(m.start(), m.start()) or re.search(
                    r"\b(?:week|weekend|month|year)\b|\b(?:in|since) (?:[A-Z]|\d{4})", text):
                continue
            found, span, _mod = L.find_date(text, ctx.today, "past" if i == 1 else "present")
            if found and span:
                has_year = re.search(r"\b\d{4}\b", text[span[0]:span[1]])
                out.append(ctx.fact(who, "birthday", found.isoformat() if has_year else found.strftime("--%m-%d")))
    return [f for f in out if f]


_LABEL = re.compile(r"^\s*([A-ZÀ-Þ][\w'.-]*(?: [A-ZÀ-Þ][\w'.-]*){0,2})\s*:\s+(.*)$")
_ASSISTANT = {"assistant", "ai", "bot", "system", "claude", "chatgpt", "gpt", "model", "agent", "tool"}
_USER = {"user", "me", "human", "customer", "client"}
_ABBR = re.compile(r"\b(Dr|Mr|Mrs|Ms|St|Ave|Rd|Jr|Sr|No|Apt|Prof|Mt|vs|etc|e\.g|i\.e|U\.S)\.", re.I)


def _sentences(text: str) -> list[str]:
    text = _ABBR.sub(lambda m: m.group(0)[:-1] + "\u2024", text)  # protect "Dr." from the split
    parts = re.split(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(]?[A-Z0-9])", text)
    return [p.replace("\u2024", ".").strip() for p in parts if p.strip()]


def _normalise(s: str) -> str:
    """Contractions spelled out so one pattern covers "I'm" and "I am"; curly quotes straightened."""
    s = s.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    s = re.sub(r"\bi\b", "I", s)
    for rx, rep in ((r"\b([Cc])an't\b", r"\1annot"), (r"\b([Ww])on't\b", r"\1ill not"), (r"n't\b", " not"),
                    (r"\bI'm\b", "I am"), (r"'re\b", " are"), (r"'ve\b", " have"), (r"'ll\b", " will"),
                    (r"'d\b", " would"), (r"\bgonna\b", "going to"), (r"\bwanna\b", "want to"), (r"\s+", " ")):
        s = re.sub(rx, rep, s)
    return s.strip()


def extract(text: str, *, author: str | None, at: datetime | date, end_user: str | None = None) -> list[Fact]:
    """Facts stated in `text`, said by `author` at `at`.

    First person resolves to the author, or to the end user when the item has no author. A line
    "Name: words" (a transcript) is that speaker's; lines of an assistant ("Assistant: ...") are skipped,
    and "User: ..." is the author's. Relative dates resolve against `at`.
    """
    today = at.date() if isinstance(at, datetime) else at
    default = _person(author) or _person(end_user)
    facts: list[Fact] = []
    for line in (text or "").splitlines():
        line = re.sub(r"\[[a-z ]+:[^\]]*\]", " ", line)  # "[image: a photo of ...]" annotations
        me = default
        if (lm := _LABEL.match(line)) and (label := lm.group(1)).lower() not in ("correction", "update", "note"):
            if label.lower() in _ASSISTANT:
                continue
            if label.lower() not in _USER and not _bad_word(label.split()[0]):
                me = _person(label)  # the transcript names who is speaking, whoever saved it
            line = lm.group(2)
        for sentence in _sentences(line):
            s = _normalise(sentence)
            if not s or s.endswith("?") or re.match(r"(?:do|does|did|are|is|am|have|has|can|will|where|what|who|"
                                                    r"when|why|how|which)\b \w+", s, re.I) and not s.endswith(
                    (".", "!")):
                continue  # a question states nothing
            ctx = _Ctx(s, me, today)
            facts += _relations(ctx) + _contacts(ctx)
            for rule in RULES:
                for m in rule[1].finditer(s):
                    facts += _generic(rule, m, ctx)
    # "My boyfriend Jake and I broke up": the ended reading wins over the plain relation from the same words.
    ended = {(f.subject, f.attribute, f.value, f.evidence) for f in facts if f.ended}
    return list(dict.fromkeys(f for f in facts if f.ended or (f.subject, f.attribute, f.value, f.evidence) not in ended))
