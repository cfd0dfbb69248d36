"""Celery tasks: thin, taking ids, idempotent, retried; the work is in read/pipeline.py."""

import logging
from datetime import timedelta

from celery import shared_task
from celery.signals import worker_init, worker_ready
from django.conf import settings
from django.core.cache import cache

from . import embeddings
from .limits import READ_RETRIES
from .read import failures as failed
from .read import own_indexes, pipeline

log = logging.getLogger(__name__)
SWEEP_BATCH = 200


@shared_task(autoretry_for=(Exception,), retry_backoff=2, retry_backoff_max=60, max_retries=8)
def read_items(item_pks: list[int], attempt: int = 0) -> int:
    """Read the given items; safe to run again, or at the same time as another read of them.

    The task as a whole is retried when it fails (the database or the model away). An item whose own read
    raises is set aside while the rest are read, read again alone READ_RETRIES times with backoff, then
    marked failed (read/failures.py).
    """
    failures: dict[int, tuple[int, str]] = {}
    done = pipeline.read_items(item_pks, failures)
    if failures and attempt < READ_RETRIES:
        read_items.apply_async(args=[sorted(failures)], kwargs={"attempt": attempt + 1},
                               countdown=settings.READ_RETRY_BACKOFF_SECONDS * 2**attempt)
    elif failures:
        failed.mark_failed(failures)
        log.warning("Marked %d items failed after %d retries", len(failures), READ_RETRIES)
    return done


@shared_task
def sweep_unread(older_than_seconds: int = 30) -> int:
    """Queue a read for every item the read has not caught up with (lost to a broker or worker outage).

    Only items older than `older_than_seconds`, so reads queued a moment ago are not queued twice.
    """
    pks = pipeline.unread_item_pks(older_than=timedelta(seconds=older_than_seconds))
    for start in range(0, len(pks), SWEEP_BATCH):
        read_items.delay(pks[start : start + SWEEP_BATCH])
    if pks:
        log.info("Sweep queued the read of %d items", len(pks))
    return len(pks)


@shared_task
def tend_own_indexes() -> int:
    """Queue a build of the own search indexes of each big memory lacking them; drop those of end users
    who are gone or whose memory has shrunk. Returns how many builds were queued."""
    dropped = own_indexes.drop_unwanted()
    if dropped:
        log.info("Dropped own indexes no longer wanted: %s", ", ".join(dropped))
    wanted = own_indexes.wanted()
    for end_user_id in wanted:
        build_own_indexes.delay(end_user_id)
    return len(wanted)


@shared_task(autoretry_for=(Exception,), retry_backoff=30, max_retries=3)
def build_own_indexes(end_user_id: int) -> list[str]:
    """Build one memory's own indexes; a build already under way for it (minutes, for a big one) is let be."""
    lock = f"own-indexes:{end_user_id}"
    if not cache.add(lock, 1, timeout=6 * 3600):
        return []
    try:
        built = own_indexes.build(end_user_id)
    finally:
        cache.delete(lock)
    if built:
        log.info("Built %s", ", ".join(built))
    return built


@worker_init.connect
def _one_thread_per_worker(**kwargs):
    # Workers scale out by processes; each keeps onnxruntime to one thread so they do not contend.
    embeddings.use_threads(1)


@worker_ready.connect
def _sweep_on_start(sender=None, **kwargs):
    # Items stored while no worker (or no broker) was up are read as soon as one is.
    sweep_unread.delay(older_than_seconds=0)
