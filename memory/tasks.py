"""Celery tasks: thin, taking ids, idempotent, retried; the work is in read/pipeline.py and
read/own_indexes.py. Each unit of work starts from one end user's Memory, built here from the ids the task
was queued with."""

import logging
from datetime import timedelta

from celery import bootsteps, shared_task
from celery.signals import worker_init
from django.conf import settings
from django.core.cache import cache

from . import embeddings
from .limits import READ_RETRIES
from .read import failures as failed
from .read import own_indexes, pipeline
from .selectors import Memory, unread_items_by_end_user

log = logging.getLogger(__name__)
SWEEP_BATCH = 200  # items per queued read: a big backlog goes in slices, each a task of its own
SWEEP_LIMIT = 5_000  # items one sweep queues at most; the next sweep (a minute later) queues the rest
OWN_INDEX_LOCK_SECONDS = 6 * 3600  # a big memory's index build takes minutes; a lock this old is stale
# A failed read is retried after up to 2, 4, 8... s (jittered, at most 60 s apart), 8 times: it rides out a locked table or
# a database restart; after that the sweep finds the items still unread.
READ_BACKOFF_SECONDS, READ_BACKOFF_MAX_SECONDS, TASK_RETRIES = 2, 60, 8
BUILD_BACKOFF_SECONDS, BUILD_RETRIES = 30, 3  # a failed own-index build; the beat asks again a minute later anyway
SWEEP_AFTER_SECONDS = 30  # a read queued less than this ago is most likely still on its way


@shared_task(autoretry_for=(Exception,), retry_backoff=READ_BACKOFF_SECONDS,
             retry_backoff_max=READ_BACKOFF_MAX_SECONDS, max_retries=TASK_RETRIES)
def read_items(end_user_id: int, item_pks: list[int], attempt: int = 0) -> int:
    """Read the given items of one end user's memory; safe to run again, or at the same time as another
    read of them. Nothing to do when the end user has been erased since.

    The task as a whole is retried when it fails (the database or the model away). An item whose own read
    raises is set aside while the rest are read, read again alone READ_RETRIES times with backoff, then
    marked failed (read/failures.py).
    """
    memory = Memory.of_end_user(end_user_id)
    if memory is None:
        return 0
    failures: dict[int, tuple[int, str]] = {}
    done = pipeline.read_items(memory, item_pks, failures)
    if failures and attempt < READ_RETRIES:
        read_items.apply_async(args=[end_user_id, sorted(failures)], kwargs={"attempt": attempt + 1},
                               countdown=settings.READ_RETRY_BACKOFF_SECONDS * 2**attempt)
    elif failures:
        failed.mark_failed(memory, failures)
        log.warning("Marked %d items failed after %d retries", len(failures), READ_RETRIES)
    return done


@shared_task
def sweep_unread(older_than_seconds: int = SWEEP_AFTER_SECONDS) -> int:
    """Queue a read for every item the read has not caught up with (lost to a broker or worker outage),
    one task per end user and slice.

    Only items older than `older_than_seconds`, so reads queued a moment ago are not queued twice.
    """
    unread = unread_items_by_end_user(older_than=timedelta(seconds=older_than_seconds), limit=SWEEP_LIMIT)
    for end_user_id, pks in unread.items():
        for start in range(0, len(pks), SWEEP_BATCH):
            read_items.delay(end_user_id, pks[start : start + SWEEP_BATCH])
    queued = sum(len(pks) for pks in unread.values())
    if queued:
        log.info("Sweep queued the read of %d items", queued)
    return queued


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


@shared_task(autoretry_for=(Exception,), retry_backoff=BUILD_BACKOFF_SECONDS, max_retries=BUILD_RETRIES)
def build_own_indexes(end_user_id: int) -> list[str]:
    """Build one memory's own indexes; a build already under way for it (minutes, for a big one) is let be,
    and an end user erased since is skipped."""
    memory = Memory.of_end_user(end_user_id)
    lock = f"own-indexes:{end_user_id}"
    if memory is None or not cache.add(lock, 1, timeout=OWN_INDEX_LOCK_SECONDS):
        return []
    try:
        built = own_indexes.build(memory)
    finally:
        cache.delete(lock)
    if built:
        log.info("Built %s", ", ".join(built))
    return built


@worker_init.connect
def _one_thread_per_worker(**kwargs):
    # Workers scale out by processes; each keeps onnxruntime to one thread so they do not contend.
    embeddings.use_threads(1)


class SweepOnConnect(bootsteps.StartStopStep):
    """Each time a worker connects to the broker, at its start and again when the broker comes back after an
    outage, it sweeps: items stored while no worker or no broker was up (their read could not be queued, or
    its message was lost with the broker) are read within seconds, not at the beat's next sweep. Registered
    in twin/celery.py."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def start(self, consumer):
        sweep_unread.delay(older_than_seconds=0)
