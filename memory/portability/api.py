"""POST /v1/memory/export and POST /v1/memory/import: authenticated as the tool routes are (the credential
names the project and the end user), in the OpenAPI schema beside them, but not tools: one streams its
answer, the other its body, which no tool call (and no MCP message) can."""

import contextlib
import tempfile
from collections.abc import Iterator
from typing import BinaryIO

from django.conf import settings
from django.http import JsonResponse, StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.views import APIView

from accounts.auth import Context, ContextAuthentication
from accounts.errors import ApiError
from memory.routes.answers import IMPORT_ANSWER
from memory.routes.api import ERROR_SCHEMA

from .. import usage
from ..errors import InsufficientScope
from ..limits import IMPORT_MAX_BYTES
from ..selectors import Memory, memory_in_scope, memory_to_write
from . import imports
from .export import CONTENT_TYPE, ExportStream, file_name

EXPORT, IMPORT = "memory_export", "memory_import"  # as the Usage page names them
BODY_READ_BYTES = 1024 * 1024  # how much of an import's body is read into memory at a time on its way to disk
FILE_SCHEMA = {"type": "string", "format": "binary"}


class BodyTooLarge(ApiError):
    """An import's body past IMPORT_MAX_BYTES, found while streaming it (the middleware refuses a declared
    Content-Length past it before anything is read)."""

    def __init__(self):
        super().__init__(
            413,
            "too_large",
            f"The body is more than {IMPORT_MAX_BYTES:,} bytes; at most {IMPORT_MAX_BYTES:,}.",
            bound=IMPORT_MAX_BYTES,
        )


@contextlib.contextmanager
def spooled(stream) -> Iterator[BinaryIO]:
    """The request body in a temporary file (deleted on exit), read a megabyte at a time and never more
    than IMPORT_MAX_BYTES of it."""
    with tempfile.TemporaryFile(dir=settings.FILE_UPLOAD_TEMP_DIR) as file:
        size = 0
        while stream is not None and (chunk := stream.read(BODY_READ_BYTES)):
            size += len(chunk)
            if size > IMPORT_MAX_BYTES:
                raise BodyTooLarge()
            file.write(chunk)
        yield file


@contextlib.contextmanager
def counted(context: Context, name: str, surface: str = "http"):
    """Count the call on the Usage page (surface "http", or "console" for the console's Export and Import),
    with its refusal if it is refused; the block may fill the count with what it caught (usage.record's
    items_added, duplicates_caught and secrets_caught: usage.import_counts)."""
    count: dict[str, int] = {}
    try:
        yield count
    except ApiError as refused:
        usage.record(usage.Call(context, name, surface), error=refused.error, message=refused.message)
        raise
    usage.record(usage.Call(context, name, surface), **count)


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
        "Every line is checked first, each item as /v1/memory/add checks it: a bad line is refused by its line "
        "number and field and nothing is stored. Then items are stored as memory_add stores them, keeping "
        "their ids, so importing the same file again changes nothing; items added come with their versions and "
        "facts. The body may be up to 2 GiB. Needs a read and write key.",
        request={CONTENT_TYPE: FILE_SCHEMA, "application/gzip": FILE_SCHEMA},
        responses={
            200: OpenApiResponse(
                IMPORT_ANSWER,
                description="How many items, by status (added, edited, "
                "unchanged, refused), each item the secret gate refused or redacted by line and "
                "field, and the versions and facts that came with them.",
            ),
            400: OpenApiResponse(ERROR_SCHEMA, description="A bad line: names the line, the field and the bound."),
            401: OpenApiResponse(ERROR_SCHEMA, description="No key, or not a key this service issued."),
            403: OpenApiResponse(ERROR_SCHEMA, description="A read key."),
            413: OpenApiResponse(
                ERROR_SCHEMA,
                description="A body over the bound, or a file holding more items "
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
        },
        tags=["memory"],
    )
    def post(self, request):
        context = request.auth
        with counted(context, IMPORT) as count:
            if not context.can_write:
                raise InsufficientScope(IMPORT)
            with spooled(request.stream) as file:
                size = imports.check_file(file, project_id=context.project.pk)
                answer = imports.store_file(memory=memory_to_write(context, create=True), file=file, size=size)
            count.update(usage.import_counts(answer))
        return JsonResponse(answer)
