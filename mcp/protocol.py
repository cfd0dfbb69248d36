"""MCP over JSON-RPC 2.0: versions, error codes, and the dispatch shared by /v1/mcp and the stdio server.

The server side is written here, not taken from the SDK: this app's name shadows the SDK's, and JSON-RPC
over HTTP or stdio is small. Tools come from memory.tools, so no tool or bound is defined twice, and a tool
call's outcome becomes JSON-RPC in one place, `tool_reply`.
"""

import logging
from dataclasses import dataclass
from http import HTTPStatus

from accounts.auth import Context
from memory.outcome import REFUSAL, TOOL_ERROR, Outcome, failure_message
from memory.tools import BY_NAME, Tool, call

from .instructions import instructions

SERVER_INFO = {"name": "twin-memory", "version": "0.3.0"}
VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST, OLDEST = VERSIONS[0], VERSIONS[-1]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Our own codes sit in -32004..-32019 (-32000..-32003 are the SDKs', -32020..-32099 the specification's).
RATE_LIMITED = -32011  # HTTP 429: over a credential's rate limit, or over the project's read backlog

log = logging.getLogger(__name__)


class RpcError(Exception):
    """A message the protocol itself refuses (not JSON-RPC, no such tool): answered as a JSON-RPC error."""

    def __init__(self, code: int, message: str, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


@dataclass(frozen=True)
class Reply:
    """What one message gets back: the JSON-RPC response (None for a notification), and the HTTP status the
    wire document gives it: 400 for a message that is not JSON-RPC, 403 for a caller refused for scope, else
    200. The stdio server sends the response alone."""

    response: dict | None
    status: int = HTTPStatus.OK


def error_response(request_id, code: int, message: str, data=None) -> dict:
    """A JSON-RPC error response; `data` carries the details when there are any."""
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def rate_limited_response(request_id, message: str, refusal: dict) -> dict:
    """The JSON-RPC error of a 429 refusal: RATE_LIMITED, its data the error's code and the seconds to wait."""
    return error_response(request_id, RATE_LIMITED, message,
                          {"error": refusal["error"], "retry_after": refusal["retry_after"]})


def result_response(request_id, result: dict) -> dict:
    """A JSON-RPC result response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def is_notification(message: dict) -> bool:
    """A message with no id: it is answered with nothing (HTTP 202, no line on stdio)."""
    return "id" not in message


def _valid_id(value) -> bool:
    """A string in valid Unicode (no lone surrogate, which no answer could encode) or an integer."""
    if isinstance(value, str):
        return not any("\ud800" <= c <= "\udfff" for c in value)
    return isinstance(value, int) and not isinstance(value, bool)


def reply_id(message):
    """The id an answer to `message` carries: its own when usable, else null (never a bad one echoed)."""
    return message["id"] if isinstance(message, dict) and _valid_id(message.get("id")) else None


def check_envelope(message) -> None:
    """Raise INVALID_REQUEST unless `message` is a JSON-RPC 2.0 request or notification."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        raise RpcError(INVALID_REQUEST, "Not a JSON-RPC 2.0 request: it needs jsonrpc \"2.0\" and a method.")
    if "id" in message and not _valid_id(message["id"]):
        raise RpcError(INVALID_REQUEST, "A request id is a string (valid Unicode) or an integer.", {"field": "id"})
    if "params" in message and not isinstance(message["params"], (dict, list)):
        raise RpcError(INVALID_REQUEST, "params, when given, is an object.")


@dataclass
class Session:
    """What one connection may reach: its context and the tools it lists."""

    context: Context
    tools: list[Tool]
    surface: str = "mcp"  # for the Usage page: mcp or stdio


def tool_entry(tool: Tool) -> dict:
    """One tool as tools/list sends it."""
    return {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "annotations": {"title": tool.title, **tool.annotations},
    }


def _initialize(session: Session, params: dict) -> dict:
    asked = params.get("protocolVersion")
    return {
        "protocolVersion": asked if asked in VERSIONS else LATEST,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": SERVER_INFO,
        "instructions": instructions(can_write=session.context.can_write),
    }


def tool_reply(request_id, outcome: Outcome) -> Reply:
    """The JSON-RPC reply to a tools/call: the one place a tool's outcome becomes JSON-RPC, over HTTP and stdio.

    An answer is a result whose text is the HTTP route's JSON; a tool error the same with isError: true. A
    refusal is a JSON-RPC error carrying the refusal's JSON as data: bad arguments are Invalid params; a caller
    without the scope is an Invalid request that HTTP answers 403 (the MCP overview; RFC 6750 §3.1); a 429
    (the project's read backlog is full) is RATE_LIMITED with the seconds to wait.
    """
    if outcome.kind != REFUSAL:
        content = [{"type": "text", "text": outcome.text}]
        return Reply(result_response(request_id, {"content": content, "isError": outcome.kind == TOOL_ERROR}))
    if outcome.status == HTTPStatus.BAD_REQUEST:
        return Reply(error_response(request_id, INVALID_PARAMS, outcome.message, outcome.body))
    if outcome.status == HTTPStatus.TOO_MANY_REQUESTS:
        return Reply(rate_limited_response(request_id, outcome.message, outcome.body), outcome.status)
    return Reply(error_response(request_id, INVALID_REQUEST, outcome.message, outcome.body), outcome.status)


def _tool_named(session: Session, name) -> Tool:
    """The tool a tools/call names: one this connection lists, or a write tool it hides for want of write access
    (the registry then refuses it for scope, as the HTTP route does). Any other name is Invalid params."""
    if not isinstance(name, str):
        raise RpcError(INVALID_PARAMS, "params.name is required: the tool's name, a string.",
                       {"error": "invalid_arguments", "field": "name", "tools": [t.name for t in session.tools]})
    tool = next((t for t in session.tools if t.name == name), None)
    if tool is None and name in BY_NAME and BY_NAME[name].writes and BY_NAME[name].mcp:
        tool = BY_NAME[name]
    if tool is None:
        raise RpcError(INVALID_PARAMS, "No tool by that name: data.tools lists the tools.",
                       {"error": "unknown_tool", "field": "name", "tools": [t.name for t in session.tools]})
    return tool


def _call_tool(session: Session, request_id, params: dict) -> Reply:
    tool = _tool_named(session, params.get("name"))
    arguments = params.get("arguments")
    outcome = call(tool, session.context, {} if arguments is None else arguments, surface=session.surface)
    return tool_reply(request_id, outcome)


RESULTS = {  # the methods answered with a result
    "initialize": _initialize,
    "ping": lambda session, params: {},
    "tools/list": lambda session, params: {"tools": [tool_entry(t) for t in session.tools]},
}
TOOLS_CALL = "tools/call"


def dispatch(session: Session, message) -> Reply:
    """Answer one JSON-RPC message, over HTTP and stdio alike. What a caller sends or a tool does is always a
    reply, never an exception: a failing tool is a JSON-RPC internal error, logged."""
    try:
        check_envelope(message)
    except RpcError as error:
        return Reply(error_response(reply_id(message), error.code, error.message, error.data),
                     HTTPStatus.BAD_REQUEST)
    request_id, method = message.get("id"), message["method"]
    if is_notification(message):
        return Reply(None)
    if method not in RESULTS and method != TOOLS_CALL:
        return Reply(error_response(request_id, METHOD_NOT_FOUND,
                                    f"No such method: this server answers {', '.join([*RESULTS, TOOLS_CALL])}."))
    params = message.get("params") or {}
    if not isinstance(params, dict):
        return Reply(error_response(request_id, INVALID_PARAMS, "params is an object."))
    try:
        if method == TOOLS_CALL:
            return _call_tool(session, request_id, params)
        return Reply(result_response(request_id, RESULTS[method](session, params)))
    except RpcError as error:
        return Reply(error_response(request_id, error.code, error.message, error.data))
    except Exception as error:  # noqa: BLE001 - a failing tool is a JSON-RPC error, not a crashed server
        log.exception("Tool failed")
        return Reply(error_response(request_id, INTERNAL_ERROR, failure_message(error)))
