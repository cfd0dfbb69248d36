"""Celery tasks: thin, taking ids, idempotent, retried; the work is in read/pipeline.py, read/own_indexes.py
and read/reembed.py. Each unit of work starts from one end user's Memory, built here from the ids the task
was queued with.

The background read is queued by project and read in turns (memory/fairness.py): `queue_project_read` on
each add's commit, one `read_project` task per project at a time, a slice each, back to the tail while work
is left; `read_items` retries the items whose read raised."""

import logging
import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from celery import bootsteps, shared_task
from celery.signals import worker_init, worker_process_init
from django.conf import settings
from django.core.cache import cache

from memory.model import embeddings, half_text
from twin import metrics
from twin.logs import log_context

from . import fairness
from .limits import READ_RETRIES
from .project_selectors import unread_by_project
from .read import failures as failed
from .read import own_indexes, pipeline, reembed
from .selectors import Memory

log = logging.getLogger(__name__)
SWEEP_LIMIT = 5_000  # unread items one sweep looks at (their projects get a turn); the next sweep sees the rest
OWN_INDEX_LOCK_SECONDS = 6 * 3600  # a big memory's index build takes minutes; a lock this old is stale
# A failed read is retried after up to 2, 4, 8... s (jittered, at most 60 s apart), 8 times: it rides out a locked
# table or a database restart; after that the sweep finds the items still unread.
READ_BACKOFF_SECONDS, READ_BACKOFF_MAX_SECONDS, TASK_RETRIES = 2, 60, 8
BUILD_BACKOFF_SECONDS, BUILD_RETRIES = 30, 3  # a failed own-index build; the beat asks again a minute later anyway
SWEEP_AFTER_SECONDS = 30  # a read queued less than this ago is most likely still on its way
# A turn reads on while no other task waits, this long at most: a worker's warm shutdown waits no longer.
# Each new turn leaves the cores half idle for a moment (its last slice is written with no model work beside
# it, the next turn's first embedded with no write beside it), so a turn is long (bench/README.md "Adding").
TURN_SECONDS = 30
# After a model change: memories queued a beat, and how long one task re-embeds before leaving the rest.
REEMBED_MEMORIES, REEMBED_TURN_SECONDS = 100, 20


def queue_project_read(project_id: int) -> None:
    """Queue a turn of the project's background read unless one is queued or being read already. Run
    eagerly (the stdio server, tests) there is no queue to share: the project is read now, to the end.
    Never fails an add that is already stored: without a broker the sweep finds the items."""
    try:
        if read_project.app.conf.task_always_eager:
            while _read_turn(project_id):
                pass
            return
        token = fairness.take_turn(project_id)
        if token is not None:
            read_project.apply_async(args=(project_id, token), retry=False)
    except Exception:  # a broker outage: the turn lapses and the sweep queues it again
        log.warning("Could not queue the read of project %s; the sweep will.", project_id, exc_info=True)


@shared_task(
    autoretry_for=(Exception,),
    retry_backoff=READ_BACKOFF_SECONDS,
    retry_backoff_max=READ_BACKOFF_MAX_SECONDS,
    max_retries=TASK_RETRIES,
)
def read_project(project_id: int, token: str) -> int:
    """One turn of a project's background read: its oldest unread items, a slice or more (_read_turn), then
    back to the tail of the queue while work is left. A task whose turn another replaced steps aside.
    Returns the items taken."""
    with fairness.reading_turn(project_id, token) as held:
        if not held:
            return 0
        taken = _read_turn(project_id)
    if fairness.work_left(project_id):
        if fairness.requeue_turn(project_id, token):  # still this task's turn: no add queues another meanwhile
            read_project.apply_async(args=(project_id, token), retry=False)
        return taken
    fairness.end_turn(project_id, token)
    if fairness.work_left(project_id):  # an add committed as the turn ended, and found it taken
        queue_project_read(project_id)
    return taken


def _read_turn(project_id: int) -> int:
    """Read the project's next slice, and the ones after it while no other task waits for a worker process,
    for up to TURN_SECONDS; returns how many items it took (0: none were waiting). The model embeds each next
    slice on a thread of its own while this one is written, so the cores are not left to the writes alone
    (bench/README.md "Adding"); a task that arrives meanwhile waits for the slice being written, no more: the
    next one is dropped (its items stay first in line) and its embedding finishes in the background."""
    deadline, queue = time.monotonic() + TURN_SECONDS, read_project.app.conf.task_default_queue

    def reading_on() -> bool:
        return time.monotonic() <= deadline and not fairness.others_waiting(queue)

    model = ThreadPoolExecutor(1, thread_name_prefix="read-model")
    try:
        current, taken = _Slice.take(project_id, model), 0
        while current is not None:
            upcoming = _Slice.take(project_id, model, in_flight=current.pks) if reading_on() else None
            taken += current.write(index_drawn_next=upcoming.end_users if upcoming else frozenset())
            if upcoming is None:  # none was waiting, or the turn was over: items added meanwhile?
                current = _Slice.take(project_id, model) if reading_on() else None
            else:  # past the deadline it is still read (its model work is done or nearly)
                current = upcoming if not fairness.others_waiting(queue) else None
        return taken
    finally:
        model.shutdown(wait=False, cancel_futures=True)


def _embed(parts: list[tuple[Memory, list[int], list, dict]]) -> None:
    """A slice's vectors, every end user's part of it, on the model's thread."""
    for _, _, work, _ in parts:
        pipeline.embed(work)


@dataclass
class _Slice:
    """A slice of a project's unread items, end user by end user, prepared and being embedded."""

    parts: list[tuple[Memory, list[int], list, dict]]  # (memory, item pks, their work, items set aside)
    pks: frozenset[int]
    embedded: Future

    @classmethod
    def take(cls, project_id: int, model: ThreadPoolExecutor, in_flight: frozenset[int] = frozenset()):
        """The project's next slice (None: no item is waiting), its embedding queued on `model`."""
        chosen = fairness.next_slice(project_id, in_flight=in_flight)
        if not chosen:
            return None
        parts = []
        for end_user_id, item_pks in chosen.items():
            memory = Memory.of_end_user(end_user_id)
            if memory is not None:
                failures: dict[int, tuple[int, str]] = {}
                parts.append((memory, item_pks, pipeline.prepare(memory, item_pks, failures), failures))
        pks = frozenset(pk for item_pks in chosen.values() for pk in item_pks)
        return cls(parts, pks, model.submit(_embed, parts))

    @property
    def end_users(self) -> frozenset[int]:
        return frozenset(memory.end_user.pk for memory, _, _, _ in self.parts)

    def write(self, index_drawn_next: frozenset[int]) -> int:
        """Write the slice once embedded; each item is then read, set aside for a retry, or edited since
        (and waiting again as a new version). An end user of the next slice gets index.md drawn after that
        one only (it was drawn after each slice, 4% of the read); when that slice is dropped for a waiting
        task, after its items are read in the next turn. Returns how many items it took."""
        self.embedded.result()
        added_by = sorted({item.request_id for _, _, work, _ in self.parts for item, _ in work if item.request_id})
        with log_context(task="read_project", items=sorted(self.pks), request_ids=added_by):
            log.info("Reading a slice of %d items of %d end users", len(self.pks), len(self.parts))
            for memory, item_pks, work, failures in self.parts:
                pipeline.write(memory, work, failures, index=memory.end_user.pk not in index_drawn_next)
                _settle(memory, item_pks, failures, attempt=0)
                now = time.time()
                metrics.read_observed(
                    [now - item.updated_at.timestamp() for item, _ in work if item.pk not in failures]
                )
        return len(self.pks)


@shared_task(
    autoretry_for=(Exception,),
    retry_backoff=READ_BACKOFF_SECONDS,
    retry_backoff_max=READ_BACKOFF_MAX_SECONDS,
    max_retries=TASK_RETRIES,
)
def read_items(end_user_id: int, item_pks: list[int], attempt: int = 0) -> int:
    """Read the given items of one end user's memory (a retry of those whose read raised, or a caller's
    own); safe to run again, or at the same time as another read of them. Nothing to do when the end user
    has been erased since."""
    memory = Memory.of_end_user(end_user_id)
    return 0 if memory is None else _read(memory, item_pks, attempt=attempt)


def _read(memory: Memory, item_pks: list[int], *, attempt: int) -> int:
    """Read the memory's items. The task as a whole is retried when it fails (the database or the model
    away)."""
    failures: dict[int, tuple[int, str]] = {}
    done = pipeline.read_items(memory, item_pks, failures)
    _settle(memory, item_pks, failures, attempt=attempt)
    return done


def _settle(memory: Memory, item_pks: list[int], failures: dict[int, tuple[int, str]], *, attempt: int) -> None:
    """After a read of `item_pks`: an item whose own read raised (in `failures`) is set aside from the
    project's turns while the rest are read, read again alone READ_RETRIES times with backoff, then marked
    failed (read/failures.py)."""
    project_id, retrying = memory.end_user.project_id, failures and attempt < READ_RETRIES
    if retrying:
        fairness.set_aside(project_id, failures)
        read_items.apply_async(
            args=(memory.end_user.pk, sorted(failures)),
            kwargs={"attempt": attempt + 1},
            countdown=settings.READ_RETRY_BACKOFF_SECONDS * 2**attempt,
        )
    elif failures:
        failed.mark_failed(memory, failures)
        metrics.failed_reads_observed(len(failures))
        log.warning("Marked %d items failed after %d retries", len(failures), READ_RETRIES)
    if attempt:
        fairness.put_back(project_id, set(item_pks) - (set(failures) if retrying else set()))


@shared_task
def sweep_unread(older_than_seconds: int = SWEEP_AFTER_SECONDS) -> int:
    """Queue a turn of the read for every project with items the read has not caught up with (lost to a
    broker or worker outage); a project whose turn is queued or being read keeps it. Returns how many unread
    items were found.

    Only items older than `older_than_seconds`, so reads queued a moment ago are not queued twice.
    """
    unread = unread_by_project(older_than=timedelta(seconds=older_than_seconds), limit=SWEEP_LIMIT)
    for project_id in unread:
        queue_project_read(project_id)
    found = sum(unread.values())
    if found:
        log.info("Sweep found %d unread items in %d projects", found, len(unread))
    return found


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


@shared_task
def reembed_stale() -> int:
    """Queue the re-embedding of each memory holding passages an earlier model embedded (a model change:
    memory/read/reembed.py). Returns how many were queued."""
    stale = reembed.stale_end_users(REEMBED_MEMORIES)
    for end_user_id in stale:
        reembed_memory.delay(end_user_id)
    return len(stale)


@shared_task(autoretry_for=(Exception,), retry_backoff=BUILD_BACKOFF_SECONDS, max_retries=BUILD_RETRIES)
def reembed_memory(end_user_id: int) -> int:
    """Embed again one memory's passages of an earlier model, a batch at a time, for up to
    REEMBED_TURN_SECONDS (the beat queues the rest a minute later); one such task a memory at a time."""
    memory = Memory.of_end_user(end_user_id)
    lock = f"reembed:{end_user_id}"
    if memory is None or not cache.add(lock, 1, timeout=2 * REEMBED_TURN_SECONDS):
        return 0
    done, started = 0, time.monotonic()
    try:
        while time.monotonic() - started < REEMBED_TURN_SECONDS:
            written = reembed.reembed(memory)
            done += written
            if written < reembed.BATCH:
                break
    finally:
        cache.delete(lock)
    log.info("Embedded %d passages of end user %d again with %s", done, end_user_id, embeddings.MODEL_ID)
    return done


@worker_init.connect
def _nice_worker(**kwargs):
    """Before the pool forks: its processes inherit a lower priority than the web tier's, the model's thread
    count (settings.READ_WORKER_NICENESS, READ_MODEL_THREADS say why) and the vectors' text table."""
    os.nice(settings.READ_WORKER_NICENESS)
    _nice_own_session(settings.READ_WORKER_NICENESS)
    embeddings.use_lanes(settings.READ_MODEL_THREADS)
    half_text.warm_up()
    if settings.WORKER_METRICS_PORT:
        metrics.serve_worker_metrics(settings.WORKER_METRICS_PORT, settings.WORKER_METRICS_HOST)


@worker_process_init.connect
def _warm_model(**kwargs):
    """After the fork (the model's threads must not be forked), each pool process readies the model."""
    embeddings.warm_up()


def _nice_own_session(niceness: int) -> None:
    """Where the kernel schedules each session's processes as a group (autogroup: the default of most Linux
    distributions), a process's niceness only orders it against its own session. PostgreSQL's backends, in
    the server's session, would then meet the model's threads as equals, and a search's SQL would wait
    behind an import (bench/README.md "Adding"). A worker that leads its session (as systemd starts a
    service, or `setsid`: `make run` does) gives the whole session its niceness; one started inside another's
    session leaves that session as it is."""
    autogroup = Path("/proc/self/autogroup")
    if os.getsid(0) != os.getpid() or not autogroup.exists():
        return
    try:
        autogroup.write_text(str(niceness))
    except OSError as error:
        log.warning("Could not set the worker session's niceness: %s", error)


class SweepOnConnect(bootsteps.StartStopStep):
    """Each time a worker connects to the broker, at its start and again when the broker comes back after an
    outage, it sweeps: items stored while no worker or no broker was up (their read could not be queued, or
    its message was lost with the broker) are read within seconds, not at the beat's next sweep; those of a
    turn that died with the last worker, once that turn has lapsed. Registered in twin/celery.py."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def start(self, consumer):
        sweep_unread.delay(older_than_seconds=0)
        sweep_unread.apply_async(kwargs={"older_than_seconds": 0}, countdown=fairness.RUNNING_TURN_SECONDS + 1)
