"""Every project gets its turn at the background read: a big import cannot starve another project's reads.

The work waiting is in the database: a project's unread items (memory.selectors.next_to_read). What Redis
holds is whose turn is queued: at most one read task per project is queued or running at a time, named by a
token in `read-turn:<project>`. A task reads one slice (READ_SLICE_ITEMS or READ_SLICE_CHARACTERS, oldest
first) and, if work is left, queues its project again at the tail of the queue, so active projects are read
in turn. While no other task waits for a worker process, a turn reads on, slice after slice, for up to
memory.tasks.TURN_SECONDS (the model embedding the next slice while this one is written): no one is kept
waiting, and each slice is spared a trip through the queue. An add whose project already has a turn queues
nothing more: that turn will reach its items.

Nothing is lost when Redis or a worker dies: a turn being read is kept alive by its task's heartbeat and
expires RUNNING_TURN_SECONDS after the task dies; the sweep (memory.tasks.sweep_unread) then finds the
unread items and queues their project's turn again, and a task whose token is no longer the project's steps
aside. Reading is idempotent, so a duplicate turn would cost time, never a wrong result.

An item whose read raised is set aside for its retry (`read-retrying:<project>`, memory.tasks.read_items),
so the turns neither read it again before its backoff nor wait for it.

A project's queued read work is capped (settings.READ_BACKLOG_ITEMS, READ_BACKLOG_CHARACTERS): an add that
would pass the cap is refused whole with 429 (ReadBacklogFull) and nothing is stored. An import file larger
than the whole cap could never pass it, however long it waited, so it is refused 413 (LargerThanBacklog),
not told to retry: the cap is the largest import a project takes.
"""

import contextlib
import logging
import threading
import uuid
from http import HTTPStatus

import redis
from django.conf import settings

from accounts.errors import ApiError
from twin import quick_redis

from .limits import READ_SLICE_CHARACTERS, READ_SLICE_ITEMS
from .project_selectors import next_to_read, read_backlog, waiting_to_read
from .selectors import scoped

log = logging.getLogger(__name__)
# A turn waiting in the queue is kept this long (the broker's visibility timeout): its message is not lost
# while Redis lives (tasks are acknowledged late), and a Redis restart loses the turn with it.
QUEUED_TURN_SECONDS = 600
# A turn being read is kept this long past its task's last heartbeat: a worker killed mid-slice frees its
# project this soon (the sweep then queues it again), and a busy task renews it well before.
RUNNING_TURN_SECONDS = 20
HEARTBEAT_SECONDS = 5
RETRYING_SECONDS = 3600  # how long an item set aside for a retry stays out of the turns at most
BACKLOG_RETRY_SECONDS = 60  # what a refused add is told to wait: the workers read a good share of it by then

# Take the turn if it is free or already this token's, renewing it; else 0 (another task holds it).
_HOLD = """
local held = redis.call('get', KEYS[1])
if held and held ~= ARGV[1] then return 0 end
redis.call('set', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
"""
# Free the turn if it is still this token's.
_END = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


class ReadBacklogFull(ApiError):
    """An add that would pass the project's cap on queued read work: refused whole, 429."""

    def __init__(self, items: int, characters: int):
        super().__init__(
            HTTPStatus.TOO_MANY_REQUESTS,
            "read_backlog_full",
            f"This project already has {items:,} items ({characters:,} characters) waiting to be read, and at "
            f"most {settings.READ_BACKLOG_ITEMS:,} items and {settings.READ_BACKLOG_CHARACTERS:,} characters may "
            f"wait. Nothing was stored: try again in {BACKLOG_RETRY_SECONDS} s.",
            retry_after=BACKLOG_RETRY_SECONDS,
            items=items,
            characters=characters,
        )


class LargerThanBacklog(ApiError):
    """An import file holding more items, or characters of text, than the project's whole cap on queued read
    work: no wait would admit it, so 413 naming the bound and its setting, without Retry-After."""

    def __init__(self, setting: str, cap: int, unit: str):
        super().__init__(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
            "too_large",
            f"The file holds more than {cap:,} {unit}, the most this project may have waiting to be read "
            f"({setting}), so it can never be admitted. Nothing was stored: split it into files of at most "
            f"{cap:,} {unit} and import them one after another.",
            field="body",
            bound=cap,
            setting=setting,
        )


def check_fits_cap(items: int, characters: int) -> None:
    """Raise LargerThanBacklog when an import file's `items` holding `characters` of text (counted so far, so
    a file is refused at the line that passes) are more than the project's whole cap on queued read work."""
    for setting, unit, size in (
        ("READ_BACKLOG_ITEMS", "items", items),
        ("READ_BACKLOG_CHARACTERS", "characters of text", characters),
    ):
        if size > getattr(settings, setting):
            raise LargerThanBacklog(setting, getattr(settings, setting), unit)


def check_backlog(project_id: int, items: int, characters: int) -> None:
    """Raise ReadBacklogFull when adding `items` holding `characters` of text (an add's, or a whole import
    file's) would pass the project's cap on queued read work."""
    waiting, waiting_characters = read_backlog(project_id)
    if (
        waiting + items > settings.READ_BACKLOG_ITEMS
        or waiting_characters + characters > settings.READ_BACKLOG_CHARACTERS
    ):
        raise ReadBacklogFull(waiting, waiting_characters)


def _redis() -> redis.Redis:
    return quick_redis.client(quick_redis.QUEUE_TIMEOUT_SECONDS)


def _turn(project_id: int) -> str:
    return quick_redis.key("read-turn", project_id)


def _retrying(project_id: int) -> str:
    return quick_redis.key("read-retrying", project_id)


def take_turn(project_id: int) -> str | None:
    """A new turn's token when the project has no turn queued or being read; None when it has one, or when
    Redis cannot say (the sweep will queue it)."""
    token = uuid.uuid4().hex
    try:
        taken = _redis().set(_turn(project_id), token, nx=True, ex=QUEUED_TURN_SECONDS)
    except redis.RedisError as error:
        log.warning("Could not queue the read of project %s; the sweep will (%s)", project_id, error)
        return None
    return token if taken else None


def _hold(project_id: int, token: str, seconds: int) -> bool:
    """Keep the project's turn for `token` for `seconds` more (taking it if it has lapsed); False when
    another token holds it. Without Redis, True: reading twice is harmless, not reading is not."""
    try:
        return bool(_redis().eval(_HOLD, 1, _turn(project_id), token, seconds))
    except redis.RedisError:
        return True


class _Heartbeat(threading.Thread):
    """Renews a turn being read every HEARTBEAT_SECONDS, so only a dead task's turn lapses."""

    def __init__(self, project_id: int, token: str):
        super().__init__(daemon=True, name=f"read-turn-{project_id}")
        self.project_id, self.token, self.stopped = project_id, token, threading.Event()

    def run(self):
        while not self.stopped.wait(HEARTBEAT_SECONDS):
            _hold(self.project_id, self.token, RUNNING_TURN_SECONDS)


@contextlib.contextmanager
def reading_turn(project_id: int, token: str):
    """The project's turn, held while its slice is read (yields True), or another task's (yields False: this
    one steps aside)."""
    if not _hold(project_id, token, RUNNING_TURN_SECONDS):
        yield False
        return
    heartbeat = _Heartbeat(project_id, token)
    heartbeat.start()
    try:
        yield True
    finally:
        heartbeat.stopped.set()
        heartbeat.join()


def requeue_turn(project_id: int, token: str) -> bool:
    """Keep the turn while its task waits in the queue again; False when another task's turn replaced it."""
    return _hold(project_id, token, QUEUED_TURN_SECONDS)


def end_turn(project_id: int, token: str) -> None:
    """Free the project's turn if `token` still holds it (else it lapses by itself)."""
    try:
        _redis().eval(_END, 1, _turn(project_id), token)
    except redis.RedisError:
        log.warning("Could not end the read turn of project %s; it lapses by itself", project_id)


def set_aside(project_id: int, item_pks) -> None:
    """Keep items out of the project's turns while their retry is pending."""
    if not item_pks:
        return
    key = _retrying(project_id)
    try:
        pipe = _redis().pipeline()
        pipe.sadd(key, *item_pks)
        pipe.expire(key, RETRYING_SECONDS)
        pipe.execute()
    except redis.RedisError:
        pass  # the turns may then read them again before their backoff: wasted work, nothing wrong


def put_back(project_id: int, item_pks) -> None:
    """Let items set aside for a retry back into the project's turns (read, or marked failed)."""
    if not item_pks:
        return
    try:
        _redis().srem(_retrying(project_id), *item_pks)
    except redis.RedisError:
        pass  # they leave the set when it expires


def _set_aside_now(project_id: int) -> set[int]:
    try:
        return {int(pk) for pk in _redis().smembers(_retrying(project_id))}
    except redis.RedisError:
        return set()


def next_slice(project_id: int, *, in_flight: frozenset[int] = frozenset()) -> dict[int, list[int]]:
    """The project's next slice to read, oldest first: end user id -> item pks. `in_flight`: the items of
    the slice this turn is writing, still unread, so not to be taken twice."""
    with scoped(project_id):
        return next_to_read(
            leave_out=_set_aside_now(project_id) | in_flight, items=READ_SLICE_ITEMS, characters=READ_SLICE_CHARACTERS
        )


def others_waiting(queue: str) -> bool:
    """Whether a task waits in `queue` (the broker's list of it) for a worker process, none being free to
    take it: a turn that finds one ends after its slice, so that task waits for a slice, not for a whole
    import. True when Redis does not answer (a slice a turn, as before turns read on)."""
    try:
        return bool(_redis().llen(queue))
    except redis.RedisError:
        return True


def work_left(project_id: int) -> bool:
    """Whether the project has unread items its turns should still read."""
    with scoped(project_id):
        return waiting_to_read(leave_out=_set_aside_now(project_id))
