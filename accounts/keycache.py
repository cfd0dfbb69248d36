"""API keys kept in each web process, so a request's key costs no database round trip, while a revocation
still holds from the very next request in every process.

A key is cached by its hash (with its project: what the request context and the rate limiter read) beside
its *generation*, a random token in Redis per key, read before the key was read from the database. Any change
to a key (revoked, deleted) or to its project (new limits, renamed, deleted) sets a new token for the key, at
the change and again when it commits (the signals below). Each request reads the token in the round trip the
rate limiter already makes (accounts/ratelimit.py `admit`): the cached key is used only when the token is
the one it was read with; otherwise, or when Redis does not answer, the key is read from the database, as
without the cache. So no process uses a key past its next request after a change.

A token Redis does not take stops the change before it is written (redis.RedisError, answered 503 by the
middleware): a key is never revoked without every process learning it. A token that is missing (Redis restarted empty)
is never trusted; the key is read again and a new token set. Entries live CACHE_SECONDS at most, and the
cache holds at most CACHE_KEYS of them.
"""

import secrets
import threading
import time
from dataclasses import dataclass
from typing import cast

import redis
from django.db import transaction
from django.db.models.signals import post_delete, post_save, pre_delete, pre_save
from django.dispatch import receiver

from twin import quick_redis

from .models import ApiKey, Project

CACHE_SECONDS = 300  # a key unused this long is read again: the cache holds the keys in use
CACHE_KEYS = 10_000  # past this many, the cache starts again empty (a process serves far fewer keys)
TOKEN_BYTES = 8
HASH_CHARS = 32  # of the key's SHA-256 naming its token in Redis: 128 bits, and not the whole stored hash


@dataclass(frozen=True)
class Cached:
    key: ApiKey  # with its project
    generation: str
    until: float


_cache: dict[str, Cached] = {}
_lock = threading.Lock()


def generation_key(key_hash: str) -> str:
    """The Redis key holding the generation token of the API key whose hash is `key_hash`."""
    return quick_redis.key("api-key-generation", key_hash[:HASH_CHARS])


def cached(key_hash: str) -> Cached | None:
    """The key cached under `key_hash` (not yet checked against its generation), or None."""
    found = _cache.get(key_hash)
    return found if found is not None and found.until > time.monotonic() else None


def load(key_hash: str, generation: str | None, *, cache: bool = True) -> ApiKey | None:
    """The key with its project from the database (None: no such key), cached under `generation`, the token
    read before this load (None: Redis held none, or did not answer; then a first token is set now, before
    the load). Nothing is cached without `cache` (Redis is not answering: it is not asked again)."""
    if cache and generation is None:
        generation = _start_generation(key_hash)
    key = ApiKey.objects.select_related("project").filter(key_hash=key_hash).first()
    if cache and key is not None and key.revoked_at is None and generation is not None:
        with _lock:
            if len(_cache) >= CACHE_KEYS:
                _cache.clear()
            _cache[key_hash] = Cached(key, generation, time.monotonic() + CACHE_SECONDS)
    return key


def read_generation(key_hash: str) -> tuple[str | None, bool]:
    """The key's token now (None when Redis holds none), and whether Redis answered: a key not in the cache
    reads it before it reads the key."""
    try:
        # The client decodes replies (decode_responses), so a stored token reads back as str.
        token = cast(str | None, quick_redis.client(quick_redis.LIMITER_TIMEOUT_SECONDS).get(generation_key(key_hash)))
        return token, True
    except redis.RedisError:
        return None, False


def _start_generation(key_hash: str) -> str | None:
    """Set a first token for the key unless one is there; the token now, or None when Redis does not answer."""
    client = quick_redis.client(quick_redis.LIMITER_TIMEOUT_SECONDS)
    try:
        client.set(generation_key(key_hash), secrets.token_hex(TOKEN_BYTES), nx=True)
        # The client decodes replies (decode_responses), so the token reads back as str.
        return cast(str | None, client.get(generation_key(key_hash)))
    except redis.RedisError:
        return None


def _renew(key_hashes: list[str]) -> None:
    """A new token for each key: every process reads those keys again on their next request. Raises
    redis.RedisError when Redis does not take them."""
    if not key_hashes:
        return
    pipe = quick_redis.client(quick_redis.QUEUE_TIMEOUT_SECONDS).pipeline(transaction=False)
    for key_hash in key_hashes:
        pipe.set(generation_key(key_hash), secrets.token_hex(TOKEN_BYTES))
    pipe.execute()
    with _lock:
        for key_hash in key_hashes:
            _cache.pop(key_hash, None)


# Each change renews its keys' tokens twice: before it is written, so a token Redis does not take stops the
# change; and once it is committed, so a process that read the key in between (the change not yet committed)
# reads it again. (Outside a transaction, on_commit runs at once: the write is committed by then.)


@receiver(pre_save, sender=ApiKey)
@receiver(pre_delete, sender=ApiKey)
def _key_changing(sender, instance: ApiKey, **_) -> None:
    if not instance._state.adding:  # a new key is in no cache
        _renew([instance.key_hash])


@receiver(post_save, sender=ApiKey)
@receiver(post_delete, sender=ApiKey)
def _key_changed(sender, instance: ApiKey, created: bool = False, **_) -> None:
    if not created:
        transaction.on_commit(lambda: _renew([instance.key_hash]), robust=True)


def _keys_of(project: Project) -> list[str]:
    return list(ApiKey.objects.filter(project=project).values_list("key_hash", flat=True))


@receiver(pre_save, sender=Project)
def _project_changing(sender, instance: Project, **_) -> None:
    # A deleted project's keys are deleted with it, each through the key's own signals.
    if not instance._state.adding:
        _renew(_keys_of(instance))


@receiver(post_save, sender=Project)
def _project_changed(sender, instance: Project, created: bool = False, **_) -> None:
    if not created:
        hashes = _keys_of(instance)
        transaction.on_commit(lambda: _renew(hashes), robust=True)
