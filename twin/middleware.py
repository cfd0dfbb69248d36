"""Requests refused before anything reads them (a malformed Content-Length, an oversized /v1/ body), requests
the service cannot serve now (503, twin/unavailable.py), and what every /v1/ answer says about caching."""

import logging

from django.conf import settings
from django.http import JsonResponse
from django.urls import Resolver404, resolve

from .requestid import with_request_id
from .unavailable import unavailable_from

log = logging.getLogger(__name__)

NO_STORE = "no-store"
CONTENT_LENGTH_DIGITS_MAX = 18  # an exabyte: longer is no real length, and int() of 4,300+ digits raises


def declared_bound(path: str) -> int | None:
    """The body bound the view of `path` declares as `body_max_bytes` (a view that streams its body to disk,
    such as the import), or None."""
    try:
        view = resolve(path).func
    except Resolver404:
        return None
    return getattr(getattr(view, "view_class", view), "body_max_bytes", None)


class NoStoreMiddleware:
    """Every /v1/ answer (results, errors, 401s, 429s, 503s, the export's stream) says Cache-Control: no-store:
    it holds a person's memory or a credential's answer, which no cache may keep or share. A view that says
    how long its answer may be kept (an MCP list result, from its ttlMs) keeps its own. Outermost, so the
    answers of the other middleware (413, 400, 503) say it too."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.path.startswith("/v1/") and not response.has_header("Cache-Control"):
            response["Cache-Control"] = NO_STORE
        return response


class BodyLimitMiddleware:
    """A Content-Length that is not a number of bytes is a 400 on every path (a view reading it would
    otherwise fail); a body over its route's bound is a 413, answered as JSON: DATA_UPLOAD_MAX_MEMORY_SIZE
    for /v1/, unless the route's view declares its own (`body_max_bytes`)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        declared = request.META.get("CONTENT_LENGTH") or "0"
        if not (declared.isascii() and declared.isdigit() and len(declared) <= CONTENT_LENGTH_DIGITS_MAX):
            return JsonResponse(
                with_request_id(
                    {
                        "error": "bad_request",
                        "message": "Content-Length must be a number of bytes.",
                        "field": "Content-Length",
                    }
                ),
                status=400,
            )
        size = int(declared)
        if size > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:  # only then is the route's own bound looked up
            bound = declared_bound(request.path_info)
            if bound is None and request.path.startswith("/v1/"):
                bound = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            if bound is not None and size > bound:
                return JsonResponse(
                    with_request_id(
                        {
                            "error": "too_large",
                            "message": f"The body is {size:,} bytes; at most {bound:,}.",
                            "field": "body",
                            "bound": bound,
                        }
                    ),
                    status=413,
                )
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
