"""Requests refused before anything reads them (a malformed Content-Length, an oversized /v1/ body), and
requests the service cannot serve now (503, twin/unavailable.py)."""

import logging

from django.conf import settings
from django.http import JsonResponse

from .unavailable import unavailable_from

log = logging.getLogger(__name__)

CONTENT_LENGTH_DIGITS_MAX = 18  # an exabyte: longer is no real length, and int() of 4,300+ digits raises


class BodyLimitMiddleware:
    """A Content-Length that is not a number of bytes is a 400 on every path (a view reading it would
    otherwise fail); a /v1/ body over DATA_UPLOAD_MAX_MEMORY_SIZE is a 413, answered as JSON."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        declared = request.META.get("CONTENT_LENGTH") or "0"
        if not (declared.isascii() and declared.isdigit() and len(declared) <= CONTENT_LENGTH_DIGITS_MAX):
            return JsonResponse({"error": "bad_request", "message": "Content-Length must be a number of bytes.",
                                 "field": "Content-Length"}, status=400)
        size = int(declared)
        if request.path.startswith("/v1/") and size > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
            return JsonResponse({"error": "too_large", "message": f"The body is {size:,} bytes; at most "
                                 f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,}.",
                                 "bound": settings.DATA_UPLOAD_MAX_MEMORY_SIZE}, status=413)
        return self.get_response(request)


class UnavailableMiddleware:
    """Any view (/v1/me, the console, /v1/memory/* before its tool runs) that raises because the pool is out,
    a statement timed out or a dependency is down answers 503 with Retry-After and {"error": "unavailable"},
    never 500. The one place Django's surface does so; a tool's own run answers through its outcome."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        busy = unavailable_from(exception)
        if busy is None:
            return None  # a bug: Django logs it and answers 500
        log.warning("%s %s answered 503: %s", request.method, request.path, exception.__class__.__name__)
        return busy.response()
