"""Requests holding what no reader of ours can take, refused before any view reads them, on every route at
once: a NUL character (PostgreSQL stores none, so a look-up by such a value fails) in the path, a query
string, a form field or a header; and a URL in a field or header that names one (resource, redirect_uri,
client_id, Origin...) that Python's URL parser cannot read ("http://[" raises ValueError).

Each surface hears the refusal in its own shape, naming the field and never quoting the value: /v1/mcp a
JSON-RPC error, the rest of /v1/ the API's JSON error, /oauth/ and the OAuth metadata `invalid_request` (RFC
6749 §5.2), the console a 400 page. An upload's body is never read here: form fields are read only from a
form-encoded body (never multipart), and never on a route that streams its body to disk (`body_max_bytes`).
"""

import re
from http import HTTPStatus
from urllib.parse import urlsplit

from django.http import HttpResponse, JsonResponse, QueryDict
from django.template.loader import render_to_string

from mcp_server.jsonrpc import INVALID_REQUEST, error_response

from .middleware import declared_bound
from .requestid import with_request_id

NUL = "\x00"
FORM_ENCODED = "application/x-www-form-urlencoded"
# The fields and headers read as URLs somewhere (the toolkit, oauthlib, our resource and Origin checks, the
# console's `next`); any field named *_uri or *_url is read as one too.
URL_FIELDS = frozenset(("resource", "redirect_uri", "client_id", "next"))
URL_HEADERS = frozenset(("origin", "referer"))
# A field is named in the refusal only when its name is plainly one; any other name is a caller's text.
_NAMEABLE = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")
MCP_PATH = "/v1/mcp"
OAUTH_PREFIXES = ("/oauth/", "/.well-known/")


def _reads_as_url(name: str) -> bool:
    return name in URL_FIELDS or name.endswith(("_uri", "_url"))


def _unparseable(value: str) -> bool:
    """Whether Python's URL parser raises on `value`, as every reader of a URL here would (its port too)."""
    try:
        _ = urlsplit(value).port  # parsed when read: a port that is no number, or out of range, raises
    except ValueError:
        return True
    return False


def _fault(value: str, url: bool) -> str | None:
    """What is wrong with one value, as the end of a sentence, or None."""
    if NUL in value:
        return "holds a NUL (\\u0000) character"
    if url and value and _unparseable(value):
        return "is not a URL this server can read"
    return None


def _form(request) -> QueryDict:
    """The request's form fields, read only from a form-encoded POST to a route that reads its body whole."""
    if request.method != "POST" or request.content_type != FORM_ENCODED:
        return QueryDict()
    if declared_bound(request.path_info) is not None:  # a body streamed to disk (the import): never read here
        return QueryDict()
    return request.POST


def request_fault(request) -> tuple[str, str] | None:
    """(field, message) for the first thing in `request` that no reader of ours can take, or None. The message
    names where it is and never quotes it."""
    if NUL in request.path_info:
        return "url", "The URL's path holds a NUL (\\u0000) character."
    for name, value in request.headers.items():
        fault = _fault(name, url=False) or _fault(value, url=name.lower() in URL_HEADERS)
        if fault:
            if _NAMEABLE.fullmatch(name):
                return name, f"The {name} header {fault}."
            return "headers", f"A header {fault}."
    for where, fields in (("query parameter", request.GET), ("form field", _form(request))):
        for name, values in fields.lists():
            for value in values:
                fault = _fault(name, url=False) or _fault(value, url=_reads_as_url(name))
                if fault:
                    if _NAMEABLE.fullmatch(name):
                        return name, f"The {where} {name} {fault}."
                    field = "query" if where == "query parameter" else "form"
                    return field, f"A {where} {fault}."
    return None


def refusal(path: str, field: str, message: str) -> HttpResponse:
    """A 400 in the shape of the surface `path` belongs to."""
    if path == MCP_PATH:
        data = {"error": "bad_request", "message": message, "field": field}
        return JsonResponse(error_response(None, INVALID_REQUEST, message, data), status=HTTPStatus.BAD_REQUEST)
    if path.startswith("/v1/"):
        body = with_request_id({"error": "bad_request", "message": message, "field": field})
        return JsonResponse(body, status=HTTPStatus.BAD_REQUEST)
    if path.startswith(OAUTH_PREFIXES):
        body = {"error": "invalid_request", "error_description": message, "field": field}
        response = JsonResponse(body, status=HTTPStatus.BAD_REQUEST)
        response["Cache-Control"] = "no-store"  # as every answer of the OAuth endpoints (RFC 6749 §5.1)
        return response
    page = render_to_string("console/bad_request.html", {"message": message})
    return HttpResponse(page, status=HTTPStatus.BAD_REQUEST)


class MalformedInputMiddleware:
    """Refuses, before any view or session look-up reads it, a request holding a NUL or an unreadable URL
    (`request_fault`), with a 400 in its surface's shape."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        fault = request_fault(request)
        if fault is not None:
            return refusal(request.path_info.replace(NUL, ""), *fault)
        return self.get_response(request)
