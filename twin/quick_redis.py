"""Redis where a request or an add is waiting: a client that gives up fast and never retries.

The rate limiter (accounts/ratelimit.py) and the read queue's turns (memory/fairness.py) ask Redis on the
request path. Neither may make a request wait on a Redis that is down or stalled: each call gives up after
its timeout, and the caller carries on without it (the limiter lets the call through; a read not queued is
found by the sweep). Django's cache client has no timeout at all and retries, so these two do not use it.

Keys carry the cache's KEY_PREFIX (TWIN_CACHE_PREFIX), so a test run's counters and turns are its own.
"""

import threading

import redis
from django.conf import settings
from redis.backoff import NoBackoff
from redis.retry import Retry

# How long the rate limiter waits for Redis before letting the call through: on loopback Redis answers in
# well under a millisecond, so 50 ms is a stall, not a busy moment.
LIMITER_TIMEOUT_SECONDS = 0.05
# How long queueing a read waits: longer than the limiter, since giving up here leaves the read to the sweep
# (up to 90 s later); a stopped Redis refuses the connection at once either way.
QUEUE_TIMEOUT_SECONDS = 0.5

_clients: dict[tuple[str, float], redis.Redis] = {}
_lock = threading.Lock()


def client(timeout: float) -> redis.Redis:
    """A client of settings.REDIS_URL that raises redis.RedisError after `timeout` seconds, connecting or
    waiting for an answer, and never retries. One per URL and timeout, shared by a process's threads."""
    url = settings.REDIS_URL
    found = _clients.get((url, timeout))
    if found is None:
        with _lock:
            found = _clients.setdefault(
                (url, timeout),
                redis.Redis.from_url(
                    url,
                    socket_timeout=timeout,
                    socket_connect_timeout=timeout,
                    retry=Retry(NoBackoff(), 0),
                    decode_responses=True,
                ),
            )
    return found


def key(*parts) -> str:
    """A key under the cache's prefix: `<KEY_PREFIX>:<part>:<part>…`."""
    return ":".join([settings.CACHES["default"]["KEY_PREFIX"], *(str(part) for part in parts)])
