"""The read's notices: a worker announces each committed read on its end user's Redis channel, and a
`wait: true` add (services.memory_add) listens there instead of holding a database connection while
it waits.

An import job (memory/portability/jobs.py) announces its end the same way, on a channel of its own, to the
request that waits for it.

Notices are hints, never the truth: a listener re-checks the database on each one and at its deadline, so
a lost or extra notice costs a look, nothing else. With Redis away, announcing does nothing and listening
is refused at once (the add answers searchable: false), so neither a read nor a request ever waits for Redis.
"""

import contextlib
import functools
import logging
import threading
import time

import redis
from django.conf import settings
from redis.backoff import NoBackoff
from redis.retry import Retry

from twin.capacity import waiting_adds_max

log = logging.getLogger(__name__)
# Redis answers on the network within a millisecond; one that has not in this long is treated as away.
REDIS_ANSWER_SECONDS = 0.1
NOTICE = "read"
READ, IMPORT = "read", "import"  # the kinds of channel: an end user's reads, an import job's end

# At most half of a web process's threads wait at once, so waits never take the threads other requests need.
_waiting = threading.BoundedSemaphore(waiting_adds_max())


@functools.lru_cache(maxsize=4)
def _redis(url: str) -> redis.Redis:
    # One try: a retry would only make a request wait longer for a Redis that is away.
    return redis.Redis.from_url(
        url,
        socket_connect_timeout=REDIS_ANSWER_SECONDS,
        socket_timeout=REDIS_ANSWER_SECONDS,
        retry=Retry(NoBackoff(), 0),
    )


def _channel(key: int, kind: str = READ) -> str:
    return f"{settings.CACHES['default']['KEY_PREFIX']}:{kind}:{int(key)}"


def announce_read(end_user_id: int) -> None:
    """Tell whoever waits on this end user's adds that a read has committed. Never fails the read: with
    Redis away no add is listening (each answered at once), and one that was finds out at its deadline."""
    _announce(_channel(end_user_id))


def announce_import(job_id: int) -> None:
    """Tell whoever waits on this import job that it has ended; never fails the job, as announce_read."""
    _announce(_channel(job_id, IMPORT))


def _announce(channel: str) -> None:
    try:
        _redis(settings.REDIS_URL).publish(channel, NOTICE)
    except redis.RedisError as error:
        log.debug("Could not announce on %s: %s", channel, error.__class__.__name__)


class Listener:
    """One waiting add's subscription to its end user's notices."""

    def __init__(self, pubsub: redis.client.PubSub):
        self._pubsub = pubsub

    def next(self, deadline: float) -> bool:
        """Block until a read is announced (True), or until `deadline` (time.monotonic) or Redis going away
        (False)."""
        while (left := deadline - time.monotonic()) > 0:
            try:
                # None also for the subscription's own confirmation: then listen on
                if self._pubsub.get_message(ignore_subscribe_messages=True, timeout=left) is not None:
                    return True
            except redis.RedisError:
                return False
        return False


def listening(end_user_id: int):
    """A Listener on the end user's notices, or None when half this process's threads already wait or Redis
    does not answer: then the caller answers at once."""
    return _listening(_channel(end_user_id))


def listening_to_import(job_id: int):
    """A Listener on an import job's notice of its end, or None as for `listening`: the same threads wait."""
    return _listening(_channel(job_id, IMPORT))


@contextlib.contextmanager
def _listening(channel: str):
    if not _waiting.acquire(blocking=False):
        yield None
        return
    pubsub = _redis(settings.REDIS_URL).pubsub(ignore_subscribe_messages=True)
    try:
        try:
            pubsub.subscribe(channel)
            subscribed = True
        except redis.RedisError as error:
            log.info("Not waiting for a read: Redis does not answer (%s)", error.__class__.__name__)
            subscribed = False
        yield Listener(pubsub) if subscribed else None
    finally:
        with contextlib.suppress(redis.RedisError):
            pubsub.close()
        _waiting.release()
