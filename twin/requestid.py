"""Every answer's X-Request-Id: the caller's, when it sent one of 1 to REQUEST_ID_MAX safe characters, else one
made here. It is bound to the request's log context (twin/logs.py), so every line of the request names it, and
every JSON error body carries it (`with_request_id`), so a caller reporting an error can quote it."""

import logging
import re
import time
import uuid

from django.utils.log import log_response

from . import metrics
from .logs import bind, log_context, log_fields

REQUEST_ID_HEADER = "X-Request-Id"
REQUEST_ID_MAX = 128
# Letters, digits and the punctuation ids are made of: nothing that breaks a log line or a header.
_SAFE = re.compile(rf"[A-Za-z0-9._:/+=@-]{{1,{REQUEST_ID_MAX}}}")
log = logging.getLogger("twin.requests")


def request_id_from(sent: str | None) -> str:
    """The request id for a request that sent `sent` in its header: kept when safe, else a new one."""
    if sent is not None and _SAFE.fullmatch(sent):
        return sent
    return uuid.uuid4().hex


def current_request_id() -> str | None:
    """The id of the request (or of the add a background read serves) under way, None outside one."""
    return log_fields().get("request_id")


def request_id_or_blank() -> str:
    """The current request's id, or "" outside one: what an item added or edited now keeps."""
    return current_request_id() or ""


def with_request_id(body: dict) -> dict:
    """`body` with the current request's id as `request_id`, when there is one and it names none yet."""
    request_id = current_request_id()
    if request_id is None or "request_id" in body:
        return body
    return {**body, "request_id": request_id}


class RequestIdMiddleware:
    """Outermost: binds the request's id for every line logged while it is served, says it in X-Request-Id on
    every answer (the other middleware's refusals included), and logs the answer's status and duration. Django
    would log a 4xx after the last middleware returns, outside the request's context: it is logged here, the
    same line, inside it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request_id = request_id_from(request.META.get("HTTP_X_REQUEST_ID"))
        request.request_id = request_id
        started = time.perf_counter()
        with log_context(request_id=request_id):
            response = self.get_response(request)
            bind(status=response.status_code, duration_ms=round((time.perf_counter() - started) * 1000, 1))
            if response.status_code >= 400:
                log_response("%s: %s", response.reason_phrase, request.path, response=response, request=request)
            log.info("%s %s answered %s", request.method, request.path, response.status_code)
        metrics.answered(request, response)
        response[REQUEST_ID_HEADER] = request_id
        return response
