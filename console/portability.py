"""An end user's memory as a file: Export (a download, for every role that sees the memory) and Import (an
upload into it, for Owners and Admins), through the same export and import the API serves
(memory/portability/), counted on the Usage page as the API's are, from the console. The page shows the
import's progress: its "Not read yet" count."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from accounts.auth import Context
from accounts.models import Access
from accounts.selectors import end_user_of_project
from memory import usage
from memory.fairness import LargerThanBacklog, ReadBacklogFull
from memory.limits import IMPORT_MAX_BYTES
from memory.portability import imports
from memory.portability.api import EXPORT, IMPORT, counted, download
from memory.portability.export import ExportsBusy, ExportStream
from memory.portability.format import InvalidImport
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
    """An uploaded export put into this end user's memory: checked whole first (a bad line is named and
    nothing stored), then stored; the page then counts what the background read has still to read."""
    project = project_for(request, slug, "import_memory")
    memory = _memory(project, account)
    back = redirect("console:end-user", slug=project.slug, account=account)
    upload = request.FILES.get(UPLOAD_FIELD)  # Django streams an upload this large to a temporary file
    if upload is None:
        messages.error(request, "Choose an export file to import.")
        return back
    try:
        with counted(_context(project, account, Access.WRITE), IMPORT, SURFACE) as count:
            size = imports.check_file(upload, project_id=project.pk)
            answer = imports.store_file(memory=memory, file=upload, size=size)
            count.update(usage.import_counts(answer))
    except (InvalidImport, LargerThanBacklog, ReadBacklogFull) as refused:
        messages.error(request, f"Nothing was imported: {refused.message}.")
        return back
    statuses = ", ".join(f"{count} {status}" for status, count in sorted(answer["statuses"].items())) or "none"
    messages.success(
        request,
        f"Imported {answer['items']} items ({statuses}), with {answer['versions']} earlier "
        f"versions and {answer['facts']} facts. {answer['unread_items']} still to be read.",
    )
    return back


# A body this large reaches this view (twin/middleware.py); a larger one is refused before it is read.
import_.body_max_bytes = IMPORT_MAX_BYTES
