"""An import is a job, not a request (docs/export-format.md "What an import does").

The request (api.py, the console) spools the file to disk and makes a job (import_job_start); a Celery task on
a queue of its own (`run_import`, on import_queue(): a worker at the read's niceness, `make run`) runs it
(import_job_run): the first pass, then the second, its counts kept on the job's row as it goes. The request
waits for its end as `wait: true` waits for a read (answers.import_job_wait) and answers what it ended with,
or 202 with the job's address. importmemory runs a job in its own process.

One import of a project runs at a time: a job's row holds the project's turn from its making to its end (the
one_running_import constraint), and its runner holds a PostgreSQL advisory lock on it while it runs, so a job
whose runner died (the lock goes with its connection) is told from one running, and is run again; one that
died while storing is undone first.

Undoing erases what the job added as a forget erases it (services.memory_forget), and the end user too when
the job made them and nothing else has been stored for them. An item the job edited keeps the edit, its
earlier text kept as a version, as any edit does.
"""

import contextlib
import logging
import secrets
import time
from collections.abc import Callable
from datetime import timedelta

from celery import shared_task
from django.db import IntegrityError, connection, transaction
from django.urls import reverse
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from accounts.auth import Context
from accounts.errors import ApiError
from accounts.models import Access, SecretPolicy
from accounts.selectors import end_user_of_project
from accounts.services import end_user_get_or_create

from .. import erasure, services, usage
from ..fairness import LargerThanBacklog, ReadBacklogFull
from ..limits import IMPORT_QUEUED_STALE_SECONDS
from ..models import ImportJob
from ..read import notices
from ..scope import scoped
from ..selectors import Memory
from . import imports, spool
from .format import InvalidImport

log = logging.getLogger(__name__)
IMPORT = "memory_import"  # as the Usage page names an import
HTTP, CONSOLE, COMMAND = "http", "console", ""  # where a job was asked for; a command's is not counted
IMPORT_QUEUE_SUFFIX = "-import"  # the import's queue: the read's name and this (`make run` starts its worker)
PROGRESS_SECONDS = 1.0  # the first pass writes its count of lines checked to the job's row at most this often
UNDO_ITEMS = 5_000  # items an undo erases per forget (each its own transaction)
REFUSALS = (InvalidImport, LargerThanBacklog, ReadBacklogFull)  # what the first pass refuses a file with
Progress = Callable[[ImportJob], None]


class ImportRunning(ApiError):
    """This project's import is running: one at a time. 409 with Retry-After; names the running job only to
    the end user it is for."""

    def __init__(self, job: ImportJob | None):
        super().__init__(
            409,
            "import_running",
            "This project is importing a file already, and imports one at a time: send this one when it has ended.",
            retry_after=30,
            **({"job": job.public_id, "url": job_url(job)} if job is not None else {}),
        )


class ImportFailed(ApiError):
    """A job that could not end as done or refused, nothing of it kept: 503, to be sent again."""

    def __init__(self, why: str):
        super().__init__(503, "import_failed", f"{why} Nothing of it was kept: send the file again.", retry_after=30)


def import_queue() -> str:
    return f"{run_import.app.conf.task_default_queue}{IMPORT_QUEUE_SUFFIX}"


def job_url(job: ImportJob) -> str:
    return reverse("memory-import-job", args=[job.public_id])


def ended_with(job: ImportJob) -> dict:
    """An ended job's body: the import's answer (done), or its error (refused, failed)."""
    return job.answer or {}


def import_job_start(*, context: Context, stream, surface: str) -> ImportJob:
    """Spool `stream` (a body, an upload) to disk, make its job and queue its run: ImportRunning when the
    project's import is running, BodyTooLarge, or ImportFailed when the broker does not answer."""
    path = spool.spool(stream)
    try:
        job = import_job_create(context=context, file=str(path), surface=surface)
    except BaseException:
        spool.discard(str(path))
        raise
    try:
        run_import.apply_async(args=(job.project_id, job.pk), queue=import_queue(), retry=False)
    except BrokerError:
        log.warning("Could not queue import job %s", job.pk, exc_info=True)
        _end(job, ImportJob.FAILED, refusal=ImportFailed("The import could not be queued."))
    return job


def import_job_create(*, context: Context, file: str, surface: str) -> ImportJob:
    """A queued job for `file` into the context's end user; ImportRunning when the project has one running
    (which is queued again first when its runner has died, or its message is long lost)."""
    project = context.project
    with scoped(project.pk):
        try:
            with transaction.atomic():
                return ImportJob.objects.create(
                    project=project,
                    public_id=f"imp_{secrets.token_hex(12)}",
                    account=context.account,
                    surface=surface,
                    api_key=context.api_key,
                    connection=context.connection,
                    file=file,
                )
        except IntegrityError:
            running = ImportJob.objects.filter(project=project, state__in=ImportJob.RUNNING).first()
    if running is not None and _abandoned(running):
        run_import.apply_async(args=(project.pk, running.pk), queue=import_queue(), retry=False)
    raise ImportRunning(running if running is not None and running.account == context.account else None)


def _abandoned(job: ImportJob) -> bool:
    """A running job no runner has: one whose runner died (its lock is free), or one queued so long ago that
    its message must have been lost with the broker."""
    if job.state == ImportJob.QUEUED:
        return job.created_at < timezone.now() - timedelta(seconds=IMPORT_QUEUED_STALE_SECONDS)
    with _running(job.pk) as held:
        return held


@contextlib.contextmanager
def _running(job_id: int):
    """Hold the job's advisory lock (on this connection, until released) while running it; yields whether
    this process holds it (False: another runner does). The import's jobs are the only advisory locks taken."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%(key)s) AS held", {"key": job_id})
        held = dict(zip([column.name for column in cursor.description], cursor.fetchone(), strict=True))["held"]
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%(key)s)", {"key": job_id})


@shared_task(acks_late=True)
def run_import(project_id: int, job_id: int) -> str:
    """Run an import job (import_job_run), on the import's own queue; returns the state it ended in."""
    job = import_job_run(project_id, job_id)
    return job.state if job is not None else ""


def import_job_run(project_id: int, job_id: int, *, progress: Progress | None = None) -> ImportJob | None:
    """Check the job's file, then store it, unless another runner has the job or it has ended. A job found
    storing was left so by a runner that died: it is undone, and fails. `progress` is told of each count
    written to the job's row. Returns the job as it ended (None: not this runner's)."""
    with _running(job_id) as held:
        if not held:
            return None
        job = _job(project_id, job_id)
        if job is None or job.state not in ImportJob.RUNNING:
            return job
        if job.state == ImportJob.STORING:
            _undo(job)
            return _end(job, ImportJob.FAILED, refusal=ImportFailed("The import stopped while storing."))
        try:
            return _check_and_store(job, progress)
        except Exception:
            log.exception("Import job %s failed; undoing it", job.pk)
            job = _job(project_id, job_id) or job
            _undo(job)
            return _end(job, ImportJob.FAILED, refusal=ImportFailed("The import failed on the server's side."))


def _check_and_store(job: ImportJob, progress: Progress | None) -> ImportJob:
    """The two passes: a file the first refuses ends the job refused, nothing stored; what the second raises
    propagates, for import_job_run to undo."""
    _save(job, state=ImportJob.CHECKING, started_at=timezone.now(), checked=0)
    redact = job.project.secret_policy == SecretPolicy.REDACT
    try:
        file = open(job.file, "rb")  # closed by the with below, after both passes
    except FileNotFoundError:
        return _end(job, ImportJob.FAILED, refusal=ImportFailed("The import's file is gone from the spool."))
    with file:
        try:
            size = imports.check_file(
                file, project_id=job.project_id, redact=redact, progress=_checked_counter(job, progress)
            )
        except REFUSALS as refused:
            return _end(job, ImportJob.REFUSED, refusal=refused)
        made = end_user_of_project(project=job.project, external_id=job.account) is None
        _save(job, state=ImportJob.STORING, made_end_user=made, items=size.items, checked=size.items)
        if progress:
            progress(job)
        memory = Memory(end_user_get_or_create(project=job.project, external_id=job.account))
        answer = imports.store_file(
            memory=memory, file=file, size=size, redact=redact, stored=_stored_counter(job, progress)
        )
    return _end(job, ImportJob.DONE, answer=answer)


def _checked_counter(job: ImportJob, progress: Progress | None) -> imports.Checked:
    """The first pass's progress: lines checked, written to the job's row at most every PROGRESS_SECONDS."""
    last = time.monotonic()

    def checked(count: int) -> None:
        nonlocal last
        if time.monotonic() - last >= PROGRESS_SECONDS:
            last = time.monotonic()
            _save(job, checked=count)
            if progress:
                progress(job)

    return checked


def _stored_counter(job: ImportJob, progress: Progress | None) -> imports.Stored:
    """The second pass's progress, in each batch's transaction: lines stored, and the items added (appended
    to the job's row, for an undo)."""

    def stored(count: int, added: list[int]) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memory_importjob SET stored = %(stored)s, added = added || %(added)s::bigint[] "
                "WHERE id = %(job)s",
                {"stored": count, "added": added, "job": job.pk},
            )
        job.stored = count
        if progress:
            progress(job)

    return stored


def _undo(job: ImportJob) -> None:
    """Erase what the job stored (the items it added, as a forget erases them), and the end user when the job
    made them and they hold nothing else."""
    end_user = end_user_of_project(project=job.project, external_id=job.account)
    if end_user is None:
        return
    memory = Memory(end_user)
    added = list(job.added)
    for start in range(0, len(added), UNDO_ITEMS):
        with memory.scoped():
            ids = list(
                memory.items().filter(pk__in=added[start : start + UNDO_ITEMS]).values_list("external_id", flat=True)
            )
            if ids:
                services.memory_forget(memory=memory, ids=ids)
    if job.made_end_user:
        with memory.scoped():
            if memory.is_empty():
                erasure.erase_end_user(memory, [])


def _job(project_id: int, job_id: int) -> ImportJob | None:
    with scoped(project_id):
        return ImportJob.objects.select_related("project").filter(pk=job_id).first()


def _save(job: ImportJob, **fields) -> None:
    for name, value in fields.items():
        setattr(job, name, value)
    with scoped(job.project_id):
        ImportJob.objects.filter(pk=job.pk).update(**fields)


def _end(job: ImportJob, state: str, *, answer: dict | None = None, refusal: ApiError | None = None) -> ImportJob:
    """The job ended: its state and answer (or refusal) kept, its file deleted, its waiter told, and the import
    counted on the Usage page as the request it was."""
    body = answer if refusal is None else refusal.as_dict()
    status = 200 if refusal is None else refusal.status
    _save(job, state=state, answer=body, status=status, finished_at=timezone.now(), added=[])
    spool.discard(job.file)
    notices.announce_import(job.pk)
    if job.surface != COMMAND:
        context = Context(
            project=job.project,
            account=job.account,
            access=Access.WRITE,
            api_key=job.api_key,
            connection=job.connection,
        )
        call = usage.Call(context, IMPORT, job.surface)
        if refusal is not None:
            usage.record(call, error=refusal.error, message=refusal.message)
        elif answer is not None:
            usage.record(call, **usage.import_counts(answer))
    return job
