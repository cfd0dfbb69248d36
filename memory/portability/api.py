"""POST /v1/memory/export and POST /v1/memory/import (and GET /v1/memory/import/<job>): authenticated as the
tool routes are (the credential names the project and the end user), in the OpenAPI schema beside them, but
not tools: one streams its answer, the other its body, which no tool call (and no MCP message) can."""

import contextlib
from typing import TypedDict, cast

from django.http import JsonResponse, StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.views import APIView

from accounts.auth import Context, ContextAuthentication
from accounts.errors import ApiError
from memory.routes.answers import IMPORT_ANSWER, IMPORT_JOB, IMPORT_REFUSED_LINES
from memory.routes.api import ERROR_SCHEMA

from .. import usage
from ..errors import InsufficientScope
from ..limits import IMPORT_MAX_BYTES, IMPORT_WAIT_SECONDS
from ..selectors import Memory, memory_in_scope
from .export import CONTENT_TYPE, ExportStream, file_name
from .job_answers import import_job_find, import_job_response, import_job_state, import_job_wait
from .jobs import HTTP, IMPORT, import_job_start

EXPORT = "memory_export"  # as the Usage page names it (an import: jobs.IMPORT)
FILE_SCHEMA = {"type": "string", "format": "binary"}
RESPOND_ASYNC = "respond-async"  # Prefer: respond-async (RFC 7240): answer 202 at once, without waiting
REFUSED_FILE_SCHEMA = {
    **ERROR_SCHEMA,
    "properties": {
        **cast(dict, ERROR_SCHEMA["properties"]),
        "lines": IMPORT_REFUSED_LINES,
        "more_lines": {"type": "boolean", "description": "More bad lines than `lines` names: the check stopped."},
    },
}


class Caught(TypedDict, total=False):
    """What a counted block caught, named as usage.record takes it."""

    items_added: int
    duplicates_caught: int
    secrets_caught: int


@contextlib.contextmanager
def counted(context: Context, name: str, surface: str = "http"):
    """Count the call on the Usage page (surface "http", or "console" for the console's Export and Import),
    with its refusal if it is refused; the block may fill the count with what it caught (usage.record's
    items_added, duplicates_caught and secrets_caught: usage.import_counts)."""
    count: Caught = {}
    try:
        yield count
    except ApiError as refused:
        usage.record(usage.Call(context, name, surface), error=refused.error, message=refused.message)
        raise
    usage.record(usage.Call(context, name, surface), **count)


@contextlib.contextmanager
def refusals_counted(context: Context, name: str, surface: str = HTTP):
    """Count the call on the Usage page if it is refused inside; one that is not is counted by whatever it
    starts (an import: by its job, when it ends)."""
    try:
        yield
    except ApiError as refused:
        usage.record(usage.Call(context, name, surface), error=refused.error, message=refused.message)
        raise


class ExportView(APIView):
    authentication_classes = [ContextAuthentication]

    @extend_schema(
        operation_id=EXPORT,
        summary="Export memory",
        description="The end user's whole memory as JSON Lines (docs/export-format.md): a first line naming the "
        "format and its version, then every item with its earlier versions and its facts, from one snapshot. "
        "Passages, vectors and indexes are not in it: an import rebuilds them. A read key is enough. At most "
        "two exports stream from one server process at a time; another is answered 503 with Retry-After.",
        request=None,
        responses={
            (200, CONTENT_TYPE): OpenApiResponse(FILE_SCHEMA, description="The export, streamed."),
            401: OpenApiResponse(ERROR_SCHEMA, description="No key, or not a key this service issued."),
            404: OpenApiResponse(ERROR_SCHEMA, description="Nothing has been added for this end user."),
            503: OpenApiResponse(ERROR_SCHEMA, description="Exports are busy here: ask again after Retry-After."),
        },
        tags=["memory"],
    )
    def post(self, request):
        context = request.auth
        with counted(context, EXPORT):
            with memory_in_scope(context) as memory:  # only to find it: 404 no_memory when nothing was added
                memory.must_hold_items()
            stream = ExportStream(memory)
        return download(stream, memory)


def download(stream: ExportStream, memory: Memory) -> StreamingHttpResponse:
    """The streamed answer, saved by a browser under file_name()."""
    response = StreamingHttpResponse(stream, content_type=CONTENT_TYPE)
    response["Content-Disposition"] = f'attachment; filename="{file_name(memory)}"'
    return response


class ImportView(APIView):
    authentication_classes = [ContextAuthentication]
    body_max_bytes = IMPORT_MAX_BYTES  # twin/middleware.py lets a body this large through to this view alone

    @extend_schema(
        operation_id=IMPORT,
        summary="Import memory",
        description="Put an export (JSON Lines, or gzipped: told by its first bytes) into this end user's memory. "
        "The body (up to 2 GiB) is spooled to disk and imported by a job on the import's own worker, one import "
        "of a project at a time; the request waits up to 20 s for it and answers what it ended with, or 202 with "
        "the job's address (at once with `Prefer: respond-async`). Every line is checked first, each item as "
        "/v1/memory/add checks it and every value against what its column holds: a bad line is refused by its "
        "number and field (up to 100 of them are named) and nothing is stored. Then items are stored as "
        "memory_add stores them, keeping their ids, so importing the same file again changes nothing; items added "
        "come with their versions and facts. A failure on the server's side is undone. Needs a read and write key.",
        request={CONTENT_TYPE: FILE_SCHEMA, "application/gzip": FILE_SCHEMA},
        responses={
            200: OpenApiResponse(
                IMPORT_ANSWER,
                description="How many items, by status (added, edited, "
                "unchanged, refused), each item the secret gate refused or redacted by line and "
                "field, and the versions and facts that came with them.",
            ),
            202: OpenApiResponse(
                IMPORT_JOB, description="Still importing after 20 s: the job's state, and its url (also Location)."
            ),
            400: OpenApiResponse(
                REFUSED_FILE_SCHEMA,
                description="Bad lines: the first named by its line, field and bound, and up to 100 in `lines`. "
                "Nothing stored.",
            ),
            401: OpenApiResponse(ERROR_SCHEMA, description="No key, or not a key this service issued."),
            403: OpenApiResponse(ERROR_SCHEMA, description="A read key."),
            409: OpenApiResponse(
                ERROR_SCHEMA, description="This project's import is running (one at a time): Retry-After."
            ),
            413: OpenApiResponse(
                ERROR_SCHEMA,
                description="A body over the bound, a gzip expanding past its bounds, or a file holding more items "
                "or characters than the project may have waiting to be read (setting names "
                "READ_BACKLOG_ITEMS or READ_BACKLOG_CHARACTERS, bound its value): no wait would "
                "admit it, so split it.",
            ),
            429: OpenApiResponse(
                ERROR_SCHEMA,
                description="The file fits the project's cap on queued read work, "
                "but not beside what already waits: nothing stored; Retry-After says when to "
                "try again.",
            ),
            503: OpenApiResponse(
                ERROR_SCHEMA, description="The import failed on the server's side and was undone: send it again."
            ),
        },
        tags=["memory"],
    )
    def post(self, request):
        context = request.auth
        with refusals_counted(context, IMPORT):
            if not context.can_write:
                raise InsufficientScope(IMPORT)
            job = import_job_start(context=context, stream=request.stream, surface=HTTP)
        waits = RESPOND_ASYNC not in request.headers.get("Prefer", "")
        return import_job_response(import_job_wait(job, IMPORT_WAIT_SECONDS if waits else 0))


class ImportJobView(APIView):
    authentication_classes = [ContextAuthentication]

    @extend_schema(
        operation_id="memory_import_job",
        summary="An import's state",
        description="An import job of this end user's: queued, checking (lines checked so far), storing (item "
        "lines stored so far), done (with the import's answer), refused (with its error, naming the bad lines) "
        "or failed (undone). 404 for an id that is not this end user's.",
        request=None,
        responses={
            200: OpenApiResponse(IMPORT_JOB, description="The job's state."),
            401: OpenApiResponse(ERROR_SCHEMA, description="No key, or not a key this service issued."),
            404: OpenApiResponse(ERROR_SCHEMA, description="No such job for this end user."),
        },
        tags=["memory"],
    )
    def get(self, request, job: str):
        context = request.auth
        found = import_job_find(project=context.project, account=context.account, public_id=job)
        return JsonResponse(import_job_state(found))
