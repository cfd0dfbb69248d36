"""POST /v1/mcp: MCP over Streamable HTTP, one JSON-RPC message per POST, plain JSON answers.

No SSE stream and no Mcp-Session-Id: each request stands alone, so the web tier stays stateless.
"""

import json
from urllib.parse import urlsplit

from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from accounts.auth import context_from_request
from accounts.errors import ApiError
from accounts.oauth import SCOPE_WRITE
from memory.limits import JSON_DEPTH_MAX
from memory.tools import mcp_tools
from twin import json_limits

from . import protocol

RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource/v1/mcp"


def _rpc_error(status: int, code: int, message: str, request_id=None, data=None) -> JsonResponse:
    return JsonResponse(protocol.error_response(request_id, code, message, data), status=status)


def resource_metadata_url(request) -> str:
    return request.build_absolute_uri(RESOURCE_METADATA_PATH)


def _auth_error(request, error: ApiError) -> JsonResponse:
    response = _rpc_error(error.status, protocol.INVALID_REQUEST, error.message, data=error.as_dict())
    metadata = resource_metadata_url(request)
    if error.status == 401 and error.error == "invalid_token":  # an OAuth token we refused (RFC 6750 §3.1)
        response["WWW-Authenticate"] = f'Bearer error="invalid_token", resource_metadata="{metadata}"'
    elif error.status == 401:
        response["WWW-Authenticate"] = f'Bearer resource_metadata="{metadata}"'
    elif error.status == 403 and error.error == "insufficient_scope":
        # The scope that was missing, so an OAuth client can step up to exactly that (MCP, RFC 6750 §3.1).
        scope = error.details.get("scope", SCOPE_WRITE)
        response["WWW-Authenticate"] = (
            f'Bearer error="insufficient_scope", scope="{scope}", resource_metadata="{metadata}"'
        )
    return response


def _foreign_origin(request) -> bool:
    """An Origin naming a host other than the one the request was sent to (DNS rebinding, a web page)."""
    origin = request.headers.get("Origin")
    if not origin or origin == "null":
        return bool(origin)
    return urlsplit(origin).netloc.lower() != request.get_host().lower()


@csrf_exempt
def mcp_endpoint(request):
    if request.method != "POST":
        response = _rpc_error(405, protocol.INVALID_REQUEST, "Only POST: this server opens no SSE stream.")
        response["Allow"] = "POST"
        return response
    if _foreign_origin(request):
        return _rpc_error(403, protocol.INVALID_REQUEST, "The Origin header names another host.")
    try:
        context = context_from_request(request)
    except ApiError as error:
        return _auth_error(request, error)
    try:
        message = json_limits.loads(request.body)
    except json_limits.InvalidJson as bad:
        return _rpc_error(400, protocol.PARSE_ERROR, f"The body is not JSON this server reads. {bad}",
                          data={"error": "invalid_json", "field": "body", "bound": JSON_DEPTH_MAX})
    if isinstance(message, list):
        return _rpc_error(400, protocol.INVALID_REQUEST, "Batches are not accepted: one message a request.")
    request_id = protocol.reply_id(message)
    version = request.headers.get("MCP-Protocol-Version", protocol.OLDEST)
    if version not in protocol.VERSIONS:
        # A client probing a newer revision (the SDK's server/discover) reads this and falls back to initialize.
        return _rpc_error(400, protocol.INVALID_REQUEST, f"MCP-Protocol-Version {version!r} is not served here.",
                          request_id, {"supported": list(protocol.VERSIONS), "requested": version})
    session = protocol.Session(context=context, tools=mcp_tools(context))
    try:
        answer = protocol.dispatch(session, message)
    except protocol.RpcError as error:
        return _rpc_error(400, error.code, error.message, request_id, error.data)
    except ApiError as error:
        response = _auth_error(request, error)
        body = protocol.error_response(request_id, protocol.INVALID_REQUEST, error.message, error.as_dict())
        response.content = json.dumps(body)
        return response
    if answer is None:
        return HttpResponse(status=202, content_type="application/json")
    return JsonResponse(answer, json_dumps_params={"ensure_ascii": False})
