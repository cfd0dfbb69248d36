"""Sliding-window allowances in the Redis cache, shared by every web process: how many OAuth client
registrations an address may make, and how many failed sign-ins an account or an address may have. The API's
rate limits (accounts/ratelimit.py) count in the same windows.

Each window is counted in fixed slots of its own length; the previous slot's count weighs by the share of it
still inside the window, so a burst that straddles a slot boundary is still one burst (a plain fixed window
would let twice the allowance through there).
"""

import hashlib
import math
import time

from django.conf import settings
from django.core.cache import cache

KEY_HASH_CHARS = 24  # hex characters of SHA-256 naming whose attempts a cache key counts (96 bits)


def client_address(request) -> str:
    """The caller's address: REMOTE_ADDR, or behind TRUSTED_PROXIES reverse proxies the address the outermost
    of them saw, read from the right of X-Forwarded-For, where a client cannot write."""
    hops = settings.TRUSTED_PROXIES
    if hops:
        forwarded = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
        if len(forwarded) >= hops:
            return forwarded[-hops]
    return request.META.get("REMOTE_ADDR", "")


def slot_keys(scope: str, who: str, window: int) -> tuple[str, str, float]:
    """The keys of the current and the previous slot, and how far into the current one we are (0 to 1).
    The keys are the cache's (Django adds its prefix); accounts/ratelimit.py counts in the same slots."""
    slot, elapsed = divmod(time.time(), window)
    # Hashed: what `who` holds (an email, an address) never shows in the cache's keys.
    prefix = f"throttle:{scope}:{hashlib.sha256(who.encode()).hexdigest()[:KEY_HASH_CHARS]}:"
    return f"{prefix}{int(slot)}", f"{prefix}{int(slot) - 1}", elapsed / window


def seconds_to_wait(current: int, previous: int, into: float, limit: int, window: int) -> int | None:
    """Seconds until one more attempt fits the allowance again (None: it fits now), given the counts of the
    current and previous slot without it and how far into the current slot we are."""
    if current + previous * (1 - into) + 1 <= limit:
        return None
    room = limit - current - 1
    if room >= 0:  # the previous slot's share slides out before this slot ends
        return math.ceil(window * (1 - into - room / previous))
    # This slot's count then weighs as the previous one's, and slides out in turn.
    return math.ceil(window * (1 - into + 1 - (limit - 1) / max(current, 1)))


def used_up(scope: str, who: str, limit: int, window: int) -> int | None:
    """Seconds to wait when `who` has used up its allowance of `limit` in the last `window` seconds, else None.
    Counts nothing."""
    current, previous, into = slot_keys(scope, who, window)
    counts = cache.get_many([current, previous])
    return seconds_to_wait(counts.get(current, 0), counts.get(previous, 0), into, limit, window)


def count(scope: str, who: str, window: int) -> None:
    """Count one attempt by `who`."""
    current, _, _ = slot_keys(scope, who, window)
    cache.add(current, 0, 2 * window + 1)
    cache.incr(current)


def attempt(scope: str, who: str, limit: int, window: int) -> int | None:
    """Count one attempt unless it would go over the allowance: then count nothing and return the seconds to
    wait. A refused attempt is not counted, so retrying does not lock a caller out for longer."""
    current, previous, into = slot_keys(scope, who, window)
    cache.add(current, 0, 2 * window + 1)
    counted = cache.incr(current)  # atomic across processes, so two at once cannot both take the last one
    wait = seconds_to_wait(counted - 1, cache.get(previous, 0), into, limit, window)
    if wait is not None:
        cache.decr(current)
    return wait
