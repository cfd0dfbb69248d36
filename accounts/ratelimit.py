"""Rate limits per credential: how many requests an API key or an OAuth connection may make a minute, in
all and for any one end user.

Applied in one place, the request context (accounts.auth.context_from_request), so every /v1/memory/* route
and /v1/mcp are held alike, after the credential is known and before the body is read; the console's
playground is a person, not a credential, and is not limited. Two sliding windows on Redis, counted as the
sign-in limiter counts (accounts/throttle.py): RATE_LIMIT_PER_CREDENTIAL and RATE_LIMIT_PER_END_USER
requests a minute by default, each changed per project by its Owners and Admins (Project.rate_limit_*).

Over either, the call is refused with 429 (over MCP, JSON-RPC -32011) and counted nowhere, so a client that
waits Retry-After is served again. Every answer to a limited request carries the IETF httpapi
ratelimit-headers fields (draft 11): `RateLimit-Policy: "credential";q=6000;w=60, "end-user";q=600;w=60`
and `RateLimit: "credential";r=5998;t=41, "end-user";r=597;t=41`.

Redis that does not answer within 50 ms lets the call through (fail open): a limit is protection, not a
reason to refuse service. After such a failure the limiter stops asking for PAUSE_SECONDS, so an outage
costs one process one 50 ms wait now and then, not every request.
"""

import logging
import math
import time
from dataclasses import dataclass

import redis
from django.conf import settings
from django.dispatch import Signal

from twin import quick_redis

from . import throttle
from .errors import ApiError
from .models import Project

WINDOW_SECONDS = 60  # both limits are per minute
CREDENTIAL, END_USER = "credential", "end-user"  # the policies' names in the RateLimit fields
# The most a project may allow a minute: past what one service could answer (tens of thousands a minute on a
# big machine), so it only stops a typo from reading as "no limit".
RATE_LIMIT_MAX = 1_000_000
PAUSE_SECONDS = 2.0  # after Redis failed to answer, calls go through unlimited this long without asking it
RATE_LIMITED = "rate_limited"

log = logging.getLogger(__name__)
_paused_until = 0.0

# Sent once for each refused call, with `context` and `surface` ("http" or "mcp"): memory/usage.py counts it
# for the Usage page (accounts cannot import memory, which depends on it).
throttled = Signal()


@dataclass(frozen=True)
class Window:
    """One policy's standing for this request: its quota, what is left of it, and the seconds until the
    current slot ends (RateLimit's `t`; on a refusal, the wait)."""

    name: str
    quota: int
    remaining: int
    reset: int
    refused: bool = False


@dataclass(frozen=True)
class Standing:
    """Where a request stands against its credential's limits; `retry_after` when it was refused."""

    windows: tuple[Window, ...]
    retry_after: int | None = None

    def headers(self) -> dict[str, str]:
        """The RateLimit-Policy and RateLimit fields (and Retry-After for a refusal)."""
        headers = {
            "RateLimit-Policy": ", ".join(f'"{w.name}";q={w.quota};w={WINDOW_SECONDS}' for w in self.windows),
            "RateLimit": ", ".join(f'"{w.name}";r={w.remaining};t={w.reset}' for w in self.windows),
        }
        if self.retry_after is not None:
            headers["Retry-After"] = str(self.retry_after)
        return headers


class RateLimited(ApiError):
    """A request over one of its credential's limits: 429, with the seconds to wait."""

    def __init__(self, window: Window):
        per = " for one end user" if window.name == END_USER else ""
        super().__init__(
            429,
            RATE_LIMITED,
            f"Over this key's or app's limit of {window.quota:,} requests a minute"
            f"{per}: try again in {window.reset} s.",
            retry_after=window.reset,
        )


def limits_of(project: Project) -> dict[str, int]:
    """The project's two limits a minute: its own when an Owner or Admin set them, else the defaults."""
    return {
        CREDENTIAL: project.rate_limit_per_credential or settings.RATE_LIMIT_PER_CREDENTIAL,
        END_USER: project.rate_limit_per_end_user or settings.RATE_LIMIT_PER_END_USER,
    }


def _partitions(context) -> dict[str, str]:
    """Whose allowance each policy counts: the credential, and the credential with the end user."""
    credential = f"oauth:{context.connection.pk}" if context.connection is not None else f"key:{context.api_key.pk}"
    return {CREDENTIAL: credential, END_USER: f"{credential}:{context.account}"}


def _count(slots: dict[str, tuple[str, str, float]], read: str | None) -> tuple[dict[str, tuple[int, int]], str | None]:
    """Count one request in each policy's current slot and read the key `read` (when given), in one round
    trip; (counted, previous) by policy, and the value read."""
    client = quick_redis.client(quick_redis.LIMITER_TIMEOUT_SECONDS)
    pipe = client.pipeline(transaction=False)
    for current, previous, _ in slots.values():
        pipe.incr(quick_redis.key(current))
        pipe.expire(quick_redis.key(current), 2 * WINDOW_SECONDS + 1)
        pipe.get(quick_redis.key(previous))
    if read is not None:
        pipe.get(read)
    answers = iter(pipe.execute())
    counts = {}
    for policy in slots:
        counted, _, previous = next(answers), next(answers), next(answers)
        counts[policy] = (int(counted), int(previous or 0))
    return counts, next(answers, None)


def _uncount(slots: dict[str, tuple[str, str, float]]) -> None:
    """Take a refused request back out of every slot it was counted in."""
    pipe = quick_redis.client(quick_redis.LIMITER_TIMEOUT_SECONDS).pipeline(transaction=False)
    for current, _, _ in slots.values():
        pipe.decr(quick_redis.key(current))
    pipe.execute()


def _standing(limits, slots, counts) -> Standing:
    """Each policy's window once this request is counted (`counts`): what is left, or the wait when over."""
    windows = []
    for policy, limit in limits.items():
        (counted, previous), into = counts[policy], slots[policy][2]
        wait = throttle.seconds_to_wait(counted - 1, previous, into, limit, WINDOW_SECONDS)
        if wait is None:
            left = max(0, math.floor(limit - counted - previous * (1 - into)))
            windows.append(Window(policy, limit, left, math.ceil(WINDOW_SECONDS * (1 - into))))
        else:
            windows.append(Window(policy, limit, 0, wait, refused=True))
    refused = [w.reset for w in windows if w.refused]
    return Standing(tuple(windows), max(refused) if refused else None)


def _surface(request) -> str:
    """How the refused call came, as the Usage page names it: "mcp" for the /v1/mcp route, else "http"."""
    match = getattr(request, "resolver_match", None)
    return "mcp" if match is not None and match.url_name == "mcp" else "http"


def _pause(error: redis.RedisError) -> None:
    global _paused_until
    _paused_until = time.monotonic() + PAUSE_SECONDS
    log.warning("Rate limits not applied for %.0f s: Redis did not answer (%s)", PAUSE_SECONDS, error)


def redis_paused() -> bool:
    """Whether Redis failed to answer a moment ago: then the limiter, and the key cache, do not ask it."""
    return time.monotonic() < _paused_until


@dataclass(frozen=True)
class Counted:
    """A request counted in its credential's slots (`counts` None: Redis did not answer, so nothing was), and
    the value of the key read in the same round trip."""

    slots: dict[str, tuple[str, str, float]]
    counts: dict[str, tuple[int, int]] | None
    read: str | None = None


def count(context, *, also_read: str | None = None) -> Counted:
    """Count this request in its credential's two windows, in one round trip to Redis that also reads the
    key `also_read` (the key cache's generation of a cached key, accounts/keycache.py). When Redis does not
    answer in time, nothing is counted and nothing read."""
    slots = {
        policy: throttle.slot_keys(f"api-{policy}", who, WINDOW_SECONDS) for policy, who in _partitions(context).items()
    }
    if redis_paused():
        return Counted(slots, None)
    try:
        counts, value = _count(slots, also_read)
    except redis.RedisError as error:
        _pause(error)
        return Counted(slots, None)
    return Counted(slots, counts, value)


def judge(request, context, counted: Counted) -> None:
    """Refuse the counted request with RateLimited when it is over one of its project's limits (taking it
    back out of the slots), else let it through. The standing is kept on the request (`request.rate_limit`)
    for RateLimitHeadersMiddleware; a request Redis did not count goes through without the fields."""
    if counted.counts is None:
        return
    standing = _standing(limits_of(context.project), counted.slots, counted.counts)
    if standing.retry_after is not None:
        try:
            _uncount(counted.slots)  # a refused call is not counted: waiting Retry-After is enough
        except redis.RedisError as error:
            _pause(error)
            return
    request.rate_limit = standing
    if standing.retry_after is not None:
        throttled.send(sender=judge, context=context, surface=_surface(request))
        raise RateLimited(next(w for w in standing.windows if w.refused and w.reset == standing.retry_after))


def admit(request, context) -> None:
    """Count this request and judge it (`count`, then `judge`): the whole limiter for a credential whose
    context needs nothing more from Redis."""
    judge(request, context, count(context))


class RateLimitHeadersMiddleware:
    """Adds the RateLimit-Policy and RateLimit fields (and a refusal's Retry-After) to the answer of every
    request the limiter counted, whatever view answered it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        standing = getattr(request, "rate_limit", None)
        if standing is not None:
            for name, value in standing.headers().items():
                response.setdefault(name, value)
        return response
