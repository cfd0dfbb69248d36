"""What a caller is told of an import job: the wait for its end (as `wait: true` waits for a read: on its
notice, holding no database connection), the job found for its own end user only, and its answer: the
import's own (today's body, or its refusal) once it has ended, else its state and counts."""

import time

from django.db import connection
from django.http import JsonResponse

from accounts.errors import ApiError
from accounts.models import Project

from ..models import ImportJob
from ..paths import iso
from ..read import notices
from ..scope import scoped
from .jobs import ended_with, job_url

# The same words for a job that does not exist and one of another project or end user.
NOT_FOUND = "No import job with that id for this end user."


def import_job_find(*, project: Project, account: str, public_id: str) -> ImportJob:
    """The project's job `public_id` for the end user `account`; 404 for any other, as for none."""
    with scoped(project.pk):
        job = ImportJob.objects.filter(project=project, account=account, public_id=public_id).first()
    if job is None:
        raise ApiError(404, "not_found", NOT_FOUND)
    return job


def import_job_wait(job: ImportJob, seconds: float) -> ImportJob:
    """The job once it has ended, or as it stands after `seconds`: its end's notice (read/notices.py) wakes
    this for a look, as does the deadline, and no database connection is held meanwhile. Answers at once when
    half this process's threads already wait, or Redis does not answer."""
    deadline = time.monotonic() + seconds
    with notices.listening_to_import(job.pk) as listener:
        job = _again(job)  # listening from here on: an end announced before was heard by no one
        while listener is not None and job.state in ImportJob.RUNNING:
            if getattr(connection, "pool", None) is not None and not connection.in_atomic_block:
                connection.close()  # back to the pool while only waiting (as services' wait does)
            announced = listener.next(deadline)
            job = _again(job)
            if not announced:
                break
    return job


def _again(job: ImportJob) -> ImportJob:
    with scoped(job.project_id):
        return ImportJob.objects.get(pk=job.pk)


def import_job_state(job: ImportJob) -> dict:
    """GET /v1/memory/import/<id>'s answer: the job's state and counts; its answer once done (the import's
    own), its error once refused (naming the bad lines) or failed."""
    state: dict[str, object] = {
        "job": job.public_id,
        "state": job.state,
        "url": job_url(job),
        "items": job.items,
        "checked": job.checked,
        "stored": job.stored,
        "created_at": iso(job.created_at),
        "finished_at": iso(job.finished_at),
    }
    if job.state == ImportJob.DONE:
        state["answer"] = ended_with(job)
    elif job.state in (ImportJob.REFUSED, ImportJob.FAILED):
        state["error"] = ended_with(job)
    return state


def refusal_of(job: ImportJob) -> ApiError:
    """A refused or failed job's error, as the request would have raised it."""
    body = dict(ended_with(job))
    return ApiError(job.status or 503, body.pop("error"), body.pop("message"), **body)


def import_job_response(job: ImportJob) -> JsonResponse:
    """POST /v1/memory/import's answer: the import's own once the job has ended (its answer, or its refusal
    with the refusal's status), else 202 with the job's state and its address (also in Location)."""
    if job.state == ImportJob.DONE:
        return JsonResponse(ended_with(job))
    if job.state in (ImportJob.REFUSED, ImportJob.FAILED):
        return refusal_of(job).response()
    response = JsonResponse(
        {
            **import_job_state(job),
            "message": f"Importing: ask {job_url(job)} for its state; it answers the import's answer once done.",
        },
        status=202,
    )
    response["Location"] = job_url(job)
    return response
