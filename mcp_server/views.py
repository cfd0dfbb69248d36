"""POST /v1/mcp: MCP over Streamable HTTP, one JSON-RPC message per POST, plain JSON answers.

No SSE stream and no Mcp-Session-Id (one sent is ignored): each request stands alone, so the web tier stays
stateless. What is HTTP's own lives here (the method, the Origin check, the credential, status codes, the
WWW-Authenticate challenge, 202 for a notification); the era a message speaks, the checks of its headers and
its answer are the dispatch's, shared with the stdio server.
"""

from http import HTTPStatus
from urllib.parse import urlsplit

from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from accounts.auth import context_from_request
from accounts.errors import ApiError
from memory.errors import INSUFFICIENT_SCOPE
from memory.limits import JSON_DEPTH_MAX
from memory.tools import mcp_tools
from twin import json_limits
from twin.unavailable import unavailable_from

from . import protocol

RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource/v1/mcp"


def resource_metadata_url(request) -> str:
    """Where an OAuth client finds this resource's metadata (RFC 9728), named in every challenge."""
    return request.build_absolute_uri(RESOURCE_METADATA_PATH)


def _challenge(request, status: int, refusal: dict) -> str | None:
    """The WWW-Authenticate challenge of a refused caller (RFC 6750 §3.1), or None when there is none."""
    metadata = resource_metadata_url(request)
    if status == HTTPStatus.UNAUTHORIZED and refusal.get("error") == "invalid_token":  # an OAuth token we refused
        return f'Bearer error="invalid_token", resource_metadata="{metadata}"'
    if status == HTTPStatus.UNAUTHORIZED:
        return f'Bearer resource_metadata="{metadata}"'
    if status == HTTPStatus.FORBIDDEN and refusal.get("error") == INSUFFICIENT_SCOPE:
        # The scope that was missing, so an OAuth client can step up to exactly that (MCP, RFC 6750 §3.1).
        return f'Bearer error="{INSUFFICIENT_SCOPE}", scope="{refusal["scope"]}", resource_metadata="{metadata}"'
    return None


def _respond(request, body: dict, status: int) -> JsonResponse:
    """A JSON-RPC response over HTTP, with the challenge its error's data calls for."""
    response = JsonResponse(body, status=status, json_dumps_params={"ensure_ascii": False})
    data = (body.get("error") or {}).get("data")
    data = data if isinstance(data, dict) else {}
    challenge = _challenge(request, status, data)
    if challenge:
        response["WWW-Authenticate"] = challenge
    return response


def cache_control(body: dict) -> str | None:
    """What a result that says how long it may be kept (a list's `ttlMs` and `cacheScope`, 2026-07-28 caching)
    says in Cache-Control too: "private, max-age=300" for tools/list. None for any other answer, which then
    says no-store (twin.middleware.NoStoreMiddleware)."""
    result = body.get("result")
    if not isinstance(result, dict) or not isinstance(result.get("ttlMs"), int):
        return None
    return f"{result.get('cacheScope', protocol.CACHE_SCOPE)}, max-age={result['ttlMs'] // 1000}"


def _send(request, reply: protocol.Reply) -> JsonResponse:
    """A dispatch's reply over HTTP, with its status and headers."""
    assert reply.response is not None  # a notification's (no response) is answered 202 before
    response = _respond(request, reply.response, reply.status)
    for name, value in reply.headers.items():
        response[name] = value
    if kept := cache_control(reply.response):
        response["Cache-Control"] = kept
    return response


def _rpc_error(request, status: int, code: int, message: str, request_id=None, data=None) -> JsonResponse:
    return _respond(request, protocol.error_response(request_id, code, message, data), status)


def _foreign_origin(request) -> bool:
    """An Origin naming a host other than the one the request was sent to (DNS rebinding, a web page)."""
    origin = request.headers.get("Origin")
    if not origin or origin == "null":
        return bool(origin)
    return urlsplit(origin).netloc.lower() != request.get_host().lower()


@csrf_exempt
def mcp_endpoint(request):
    """One JSON-RPC message in, its answer out, with the status and headers the wire document gives it."""
    if request.method != "POST":
        response = _rpc_error(
            request,
            HTTPStatus.METHOD_NOT_ALLOWED,
            protocol.INVALID_REQUEST,
            "Only POST: this server opens no SSE stream.",
        )
        response["Allow"] = "POST"
        return response
    if _foreign_origin(request):
        return _rpc_error(
            request, HTTPStatus.FORBIDDEN, protocol.INVALID_REQUEST, "The Origin header names another host."
        )
    try:
        context = context_from_request(request)
    except ApiError as error:
        if error.status == HTTPStatus.TOO_MANY_REQUESTS:  # over the credential's rate limit
            return _send(request, protocol.retry_reply(None, error.as_dict(), error.status))
        return _rpc_error(request, error.status, protocol.INVALID_REQUEST, error.message, data=error.as_dict())
    except Exception as error:  # the credential's look-up found the database busy or away: -32010, not a 500
        busy = unavailable_from(error)
        if busy is None:
            raise
        return _send(request, protocol.retry_reply(None, busy.as_dict()))
    try:
        message = json_limits.loads(request.body)
    except json_limits.InvalidJson as bad:
        return _rpc_error(
            request,
            HTTPStatus.BAD_REQUEST,
            protocol.PARSE_ERROR,
            f"The body is not JSON this server reads. {bad}",
            data={"error": "invalid_json", "field": "body", "bound": JSON_DEPTH_MAX},
        )
    if isinstance(message, list):
        return _rpc_error(
            request,
            HTTPStatus.BAD_REQUEST,
            protocol.INVALID_REQUEST,
            "Batches are not accepted: one message a request.",
        )
    reply = protocol.dispatch(protocol.Session(context=context, tools=mcp_tools(context)), message, request.headers)
    if reply.response is None:
        return HttpResponse(status=HTTPStatus.ACCEPTED, content_type="application/json")
    return _send(request, reply)
