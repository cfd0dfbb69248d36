"""memory_how_they_work: the steps one person takes before an action, and the voice they write in.

Run-ups come from the order of the person's own events: for each action they take (deploy, merge…), the
steps they took before it on the same day or in the same thread, and the most common sequence of those.
The voice is read from what they wrote on one surface: length, register, greetings, sign-offs and
recurring phrases. Addressed by person, never ranked; an unknown person answers with the nearest known.
"""

import re
import statistics
from collections import Counter
from datetime import timedelta
from typing import Any

from ..selectors import Memory
from .events import CHAT, Event, cite, events, passages_of, resolve_person

RUN_UP_STEPS = 3  # the longest run-up reported
RUN_UP_WINDOW = timedelta(hours=12)  # and only steps this close before, on the same day or in the same thread
USUAL = 0.5  # a run-up is "usual" when at least this share of the action's times had it
WRITTEN = {"message", "comment", "review", "postmortem", "note", "document", "reply"}  # the person's own words
ACTIONS_MAX = 6
PHRASES_MAX = 5
# The register: "casual" when at least this share of the marked messages read casual, "formal" when at most
# the second, "mixed" between (a margin either side of even, so a few stray markers do not flip it).
CASUAL_SHARE, FORMAL_SHARE = 0.6, 0.4
PHRASE_WORDS_MIN, PHRASE_WORDS_MAX = 2, 6  # a recurring phrase: more than a word, shorter than a sentence
PHRASE_REPEATS = 2  # messages a phrase must occur in to be the person's, not a one-off
GREETINGS_SHOWN = 3  # greetings and sign-offs listed, most used first
SURFACES_SHOWN = 5  # the surfaces the person wrote on most, listed beside the one described
VOICE_EXAMPLES = 2  # of the person's latest messages on the surface, cited as examples of their voice
_WORD = re.compile(r"[\w'’-]+")
# A greeting word, then whom it greets ("all", "team", a name), then its comma or colon.
_GREETING = re.compile(
    r"^\s*(?:(?:good\s+)?(?:morning|afternoon|evening)|hi|hey|hello|hiya|yo|heads up|dear)\b"
    r"(?:\s+(?:all|team|folks|everyone|everybody|there|people|y'all|(?-i:[A-Z]\w+))){0,2}"
    r"[,:!]?(?=\s|$)",
    re.I,
)
_SIGNOFF = re.compile(
    r"(?:^|[.!?,\s])((?:thanks|thank you|many thanks|cheers|best|regards|kind regards|thx|ty)\b"
    r"[^.!?\n]{0,20}|[—–-]\s*[A-Z]\w+|[\U0001F300-\U0001FAFF\u2600-\u27BF]+)\s*$",
    re.I,
)
_CASUAL = re.compile(
    r"\b(lgtm|fwiw|ptal|gonna|wanna|yo|lol|tbh|imo|btw|thx|ty|yeah|yep|nope|hey|cool|"
    r"awesome)\b|[\U0001F300-\U0001FAFF]|!",
    re.I,
)
_FORMAL = re.compile(r"\b(please|regards|kindly|I will|I have|we will|thank you|reminder|priority)\b")
STOP = set(
    "a an the to of on in for and or is are was be it this that i we you at as with by from so "
    "my our your me us them they he she his her its not no but if".split()
)


def _run_up(sequence: list[Event], i: int) -> tuple[str, ...]:
    """The steps (not chat) the person took before sequence[i], same day or same thread, newest last."""
    target, found = sequence[i], []
    for event in reversed(sequence[:i]):
        if target.at - event.at > RUN_UP_WINDOW:
            break
        if event.action == CHAT or event.action == target.action:
            continue
        if event.at.date() == target.at.date() or (event.thread and event.thread == target.thread):
            found.append(event)
        if len(found) == RUN_UP_STEPS:
            break
    return tuple(e.action for e in reversed(found))


def run_ups(sequence: list[Event], *, surface: str = "") -> list[dict]:
    """For each action the person takes more than once (not chat), the usual steps before it."""
    positions: dict[str, list[int]] = {}
    for i, event in enumerate(sequence):
        if event.action != CHAT and (not surface or event.surface == surface):
            positions.setdefault(event.action, []).append(i)
    out = []
    for action, where in sorted(positions.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:ACTIONS_MAX]:
        if len(where) < 2:
            continue
        befores = {i: _run_up(sequence, i) for i in where}
        steps: tuple[str, ...] = ()
        seen = 0
        for k in range(RUN_UP_STEPS, 0, -1):  # the longest sequence most of its times share
            suffixes = Counter(b[-k:] for b in befores.values() if len(b) >= k)
            if suffixes:
                best, count = max(suffixes.items(), key=lambda kv: (kv[1], kv[0]))
                if count / len(where) >= USUAL:
                    steps, seen = best, count
                    break
        example = max((i for i in where if befores[i][-len(steps) :] == steps or not steps), default=where[-1])
        out.append(
            {
                "action": action,
                "times": len(where),
                "steps": list(steps),
                "seen": seen,
                "share": round(seen / len(where), 2),
                "_example": example,
            }
        )
    return out


def _example(sequence: list[Event], i: int, steps: list[str], passages: dict) -> list[dict]:
    """The latest time the run-up happened, step by step, each with its passage."""
    chosen, wanted = [sequence[i]], list(steps)
    for event in reversed(sequence[:i]):
        if wanted and event.action == wanted[-1] and sequence[i].at - event.at <= RUN_UP_WINDOW:
            chosen.insert(0, event)
            wanted.pop()
    return [{"action": e.action, **cite(passages[e.pk])} for e in chosen if e.pk in passages]


def voice(written: list[Event]) -> dict:
    """Length, register, greetings, sign-offs and recurring phrases of what the person wrote."""
    texts = [e.text.strip() for e in written if e.text.strip()]
    if not texts:
        return {"messages": 0}
    greetings = Counter(m.group(0).strip() for t in texts if (m := _GREETING.match(t)))
    signoffs = Counter(m.group(1).strip() for t in texts if (m := _SIGNOFF.search(t)))
    casual = sum(bool(_CASUAL.search(t)) or t[:1].islower() for t in texts)
    formal = sum(bool(_FORMAL.search(t)) or (t[:1].isupper() and t.rstrip()[-1:] in ".") for t in texts)
    share = casual / max(casual + formal, 1)
    register = "casual" if share >= CASUAL_SHARE else "formal" if share <= FORMAL_SHARE else "mixed"
    grams: Counter = Counter()
    for t in texts:
        body = _GREETING.sub("", t)
        body = _SIGNOFF.sub("", body)
        words = [w.casefold() for w in _WORD.findall(body)]
        found = {
            tuple(words[i : i + n])
            for n in range(PHRASE_WORDS_MIN, PHRASE_WORDS_MAX + 1)
            for i in range(len(words) - n + 1)
        }
        grams.update(g for g in found if g[0] not in STOP and g[-1] not in STOP)
    repeated = {g: c for g, c in grams.items() if c >= PHRASE_REPEATS}
    # A phrase is the longest run its words recur in: drop a run inside a longer one seen as often.
    maximal = [
        (g, c)
        for g, c in repeated.items()
        if not any(len(o) > len(g) and oc >= c and " ".join(g) in " ".join(o) for o, oc in repeated.items())
    ]
    maximal.sort(key=lambda gc: (-gc[1] * len(gc[0]), gc[0]))
    phrases = [" ".join(g) for g, _ in maximal[:PHRASES_MAX]]
    words = [len(_WORD.findall(t)) for t in texts]
    return {
        "messages": len(texts),
        "average_words": round(statistics.mean(words), 1),
        "median_characters": int(statistics.median(len(t) for t in texts)),
        "register": register,
        "casual_share": round(share, 2),
        "greetings": [{"text": g, "count": c} for g, c in greetings.most_common(GREETINGS_SHOWN)],
        "greeting_share": round(sum(greetings.values()) / len(texts), 2),
        "sign_offs": [{"text": s, "count": c} for s, c in signoffs.most_common(GREETINGS_SHOWN)],
        "sign_off_share": round(sum(signoffs.values()) / len(texts), 2),
        "phrases": phrases,
    }


def memory_how_they_work(*, memory: Memory, who: str, surface: str = "") -> dict:
    """The person's usual run-up before each action they take, and their voice on one surface (default:
    where they write most). An unknown person is CannotAnswer with the nearest known people."""
    memory.must_hold_items()
    person = resolve_person(memory, who)
    sequence = events(memory, author=person)
    written = [e for e in sequence if e.action in WRITTEN]
    surfaces = Counter(e.surface for e in written if e.surface) or Counter(e.surface for e in sequence if e.surface)
    wanted = surface.strip()
    if wanted:  # "#payments" and "payments" name the same channel
        match = [s for s in surfaces if s.casefold().lstrip("#") == wanted.casefold().lstrip("#")]
        wanted = match[0] if match else wanted
    chosen = wanted or (surfaces.most_common(1)[0][0] if surfaces else "")
    # The steps before an action may be taken anywhere (tests on CI, the merge on GitHub, a deploy after),
    # so a surface narrows which actions are described, not the steps before them.
    on_surface = bool(wanted) and any(e.surface == chosen and e.action != CHAT for e in sequence)
    found = run_ups(sequence, surface=chosen if on_surface else "")
    passages = passages_of(memory, [e.pk for e in sequence])
    for entry in found:
        entry["example"] = _example(sequence, entry.pop("_example"), entry["steps"], passages)
    here = [e for e in written if e.surface == chosen] if chosen else written
    answer: dict[str, Any] = {
        "who": person,
        "surface": chosen,
        "surfaces": dict(surfaces.most_common(SURFACES_SHOWN)),
        "run_ups": found,
        "voice": voice(here),
    }
    samples = [e for e in here if e.pk in passages][-VOICE_EXAMPLES:]
    answer["voice"]["examples"] = [cite(passages[e.pk]) for e in samples]
    return answer
