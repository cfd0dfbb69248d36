"""memory_next: what this person usually does next, from what they have just been doing.

A back-off sequence model over the person's own steps (their events, a run of chat counted once): the last
two steps predict the next (trigram); a context never seen backs off to the last step alone (bigram), then
to the person's base rate (unigram). Absolute discounting keeps some mass at each order for what the
context has not been seen to lead to, so the guesses form one distribution that sums to 1.
"""

from collections import Counter, defaultdict

from ..paths import iso
from ..selectors import Memory
from .events import events, owner, resolve_person, steps

ORDER = 3  # the last two steps are the context
DISCOUNT = 0.5  # mass each seen continuation gives up to the lower order
RECENT = 5  # steps shown as "recent"


def _counts(actions: list[str]) -> dict[tuple, Counter]:
    """context (the 0 to ORDER-1 steps before) -> what followed it, counted."""
    counts: dict[tuple, Counter] = defaultdict(Counter)
    for i, action in enumerate(actions):
        for n in range(ORDER):
            if i - n >= 0:
                counts[tuple(actions[i - n : i])][action] += 1
    return counts


def distribution(actions: list[str], context: tuple) -> dict[str, tuple[float, tuple]]:
    """action -> (probability, the context that predicted it: () for the base rate)."""
    counts = _counts(actions)

    def level(ctx: tuple) -> dict[str, tuple[float, tuple]]:
        seen = counts.get(ctx)
        if not ctx:
            # Callers pass a known author's actions, so the empty context was counted at least once.
            assert seen is not None
            total = sum(seen.values())
            return {a: (c / total, ()) for a, c in seen.items()}
        lower = level(ctx[1:])
        if not seen:
            return lower
        total = sum(seen.values())
        out = {a: ((c - DISCOUNT) / total, ctx) for a, c in seen.items()}
        spare = DISCOUNT * len(seen) / total
        rest = {a: p for a, p in lower.items() if a not in seen}
        rest_mass = sum(p for p, _ in rest.values())
        if rest_mass > 0:
            out.update({a: (spare * p / rest_mass, c) for a, (p, c) in rest.items()})
        else:  # the context has led to everything this person does: nothing to spare it for
            norm = sum(p for p, _ in out.values())
            out = {a: (p / norm, c) for a, (p, c) in out.items()}
        return out

    return level(tuple(context[-(ORDER - 1) :]))


def memory_next(*, memory: Memory, who: str = "", top: int = 3) -> dict:
    """The person's likeliest next steps, each with its probability, the context that predicts it, and
    `backed_off: true` when it is their base rate rather than a prediction from what they just did."""
    memory.must_hold_items()
    person = resolve_person(memory, who) if who.strip() else owner(memory)
    sequence = steps(events(memory, author=person))
    actions = [e.action for e in sequence]
    context = tuple(actions[-(ORDER - 1) :])
    ranked = sorted(distribution(actions, context).items(), key=lambda kv: (-kv[1][0], kv[0]))
    guesses = [
        {"action": action, "probability": round(p, 3), "backed_off": not ctx, "context": list(ctx)}
        for action, (p, ctx) in ranked[:top]
    ]
    recent = [
        {"action": e.action, "at": iso(e.at), "surface": e.surface, "item_id": e.item_id} for e in sequence[-RECENT:]
    ]
    return {"who": person, "recent": recent, "steps_seen": len(actions), "guesses": guesses}
