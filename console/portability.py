"""An end user's memory as a file: Export (a download, for every role that sees the memory) and Import (an
upload into it, for Owners and Admins), through the same export and import the API serves
(memory/portability/), counted on the Usage page as the API's are, from the console. An import is a job, as
the API's is: the upload waits for it as long as the API's request does, then, if it is still running, its
page shows its progress (lines checked, items stored) until it ends; the end user's page then shows the
background read's: its "Not read yet" count."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from accounts.auth import Context
from accounts.errors import ApiError
from accounts.models import Access
from accounts.selectors import end_user_of_project
from memory.limits import IMPORT_MAX_BYTES, IMPORT_WAIT_SECONDS
from memory.models import ImportJob
from memory.portability.api import EXPORT, counted, download, refusals_counted
from memory.portability.export import ExportsBusy, ExportStream
from memory.portability.job_answers import import_job_find, import_job_wait
from memory.portability.jobs import CONSOLE, IMPORT, ended_with, import_job_start
from memory.selectors import Memory

from .access import NOT_FOUND, project_for
from .security import console_page

UPLOAD_FIELD = "file"
SURFACE = "console"  # where the Usage page counts these calls: as the playground's runs


def _context(project, account: str, access: str) -> Context:
    """Whose memory the page reaches, as the Usage page counts it: a person in the console, not a key."""
    return Context(project=project, account=account, access=access)


def _memory(project, account: str) -> Memory:
    end_user = end_user_of_project(project=project, external_id=account)
    if end_user is None:
        raise Http404(NOT_FOUND)
    return Memory(end_user)


@console_page
@login_required
@require_GET
def export(request, slug: str, account: str):
    """The end user's memory as an export file (docs/export-format.md), streamed to the browser."""
    project = project_for(request, slug, "export_memory")
    memory = _memory(project, account)
    try:
        with counted(_context(project, account, Access.READ), EXPORT, SURFACE):
            stream = ExportStream(memory)
        return download(stream, memory)
    except ExportsBusy as busy:
        messages.error(request, busy.message)
        return redirect("console:end-user", slug=project.slug, account=account)


@console_page
@login_required
@require_POST
def import_(request, slug: str, account: str):
    """An uploaded export put into this end user's memory by an import job: checked whole first (bad lines
    are named and nothing stored), then stored. Answered here when the job ends within the API's wait, else
    on the job's page."""
    project = project_for(request, slug, "import_memory")
    _memory(project, account)
    back = redirect("console:end-user", slug=project.slug, account=account)
    upload = request.FILES.get(UPLOAD_FIELD)  # Django streams an upload this large to a temporary file
    if upload is None:
        messages.error(request, "Choose an export file to import.")
        return back
    context = _context(project, account, Access.WRITE)
    try:
        with refusals_counted(context, IMPORT, SURFACE):
            job = import_job_start(context=context, stream=upload, surface=CONSOLE)
    except ApiError as refused:
        messages.error(request, f"Nothing was imported: {refused.message}")
        return back
    job = import_job_wait(job, IMPORT_WAIT_SECONDS)
    if job.state in ImportJob.RUNNING:
        return redirect("console:end-user-import-job", slug=project.slug, account=account, job=job.public_id)
    _tell(request, job)
    return back


# A body this large reaches this view (twin/middleware.py); a larger one is refused before it is read.
import_.body_max_bytes = IMPORT_MAX_BYTES


@console_page
@login_required
@require_GET
def import_job(request, slug: str, account: str, job: str):
    """An import job's page: its state and counts, looked at again every few seconds while it runs; once it
    has ended, what it ended with, on the end user's page."""
    project = project_for(request, slug, "import_memory")
    try:
        found = import_job_find(project=project, account=account, public_id=job)
    except ApiError:
        raise Http404(NOT_FOUND) from None
    if found.state not in ImportJob.RUNNING:
        _tell(request, found)
        return redirect("console:end-user", slug=project.slug, account=account)
    return render(request, "console/import_job.html", {"project": project, "account": account, "job": found})


def _tell(request, job: ImportJob) -> None:
    """What an ended job did, as a message on the next page."""
    if job.state != ImportJob.DONE:
        messages.error(request, f"Nothing was imported: {ended_with(job)['message']}")
        return
    answer = ended_with(job)
    statuses = ", ".join(f"{count} {status}" for status, count in sorted(answer["statuses"].items())) or "none"
    messages.success(
        request,
        f"Imported {answer['items']} items ({statuses}), with {answer['versions']} earlier "
        f"versions and {answer['facts']} facts. {answer['unread_items']} still to be read.",
    )
