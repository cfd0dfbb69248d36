"""MCP over JSON-RPC 2.0: versions, error codes, and the dispatch shared by /v1/mcp and the stdio server.

The server side is written here, not taken from the SDK: this app's name shadows the SDK's, and JSON-RPC
over HTTP or stdio is small. Tools come from memory.tools, so no tool or bound is defined twice.
"""

from dataclasses import dataclass

from accounts.auth import Context
from accounts.errors import ApiError
from memory.errors import CannotAnswer, InvalidArguments
from memory.tools import BY_NAME, Tool, call, encode

from .instructions import instructions

SERVER_INFO = {"name": "twin-memory", "version": "0.3.0"}
VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST, OLDEST = VERSIONS[0], VERSIONS[-1]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class RpcError(Exception):
    def __init__(self, code: int, message: str, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def error_response(request_id, code: int, message: str, data=None) -> dict:
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def is_notification(message: dict) -> bool:
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
    surface: str = "mcp"  # for the Usage page: mcp, stdio or console


def tool_entry(tool: Tool) -> dict:
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


def _call_tool(session: Session, params: dict) -> dict:
    name = params.get("name")
    if not isinstance(name, str):
        raise RpcError(INVALID_PARAMS, "params.name is required: the tool's name, a string.",
                       {"error": "invalid_arguments", "field": "name", "tools": [t.name for t in session.tools]})
    tool = next((t for t in session.tools if t.name == name), None)
    if tool is None:
        hidden = name in BY_NAME and BY_NAME[name].writes and BY_NAME[name].mcp
        if hidden:
            raise ApiError(403, "insufficient_scope", f"{name} needs a read and write key or a Read and save "
                           "connection.")
        raise RpcError(INVALID_PARAMS, "No tool by that name: data.tools lists the tools.",
                       {"error": "unknown_tool", "field": "name", "tools": [t.name for t in session.tools]})
    arguments = params.get("arguments")
    try:
        answer = call(tool, session.context, {} if arguments is None else arguments, surface=session.surface)
    except InvalidArguments as bad:
        raise RpcError(INVALID_PARAMS, bad.message, bad.as_dict()) from None
    except CannotAnswer as missing:
        return {"content": [{"type": "text", "text": encode(missing.as_dict())}], "isError": True}
    return {"content": [{"type": "text", "text": encode(answer)}], "isError": False}


METHODS = {
    "initialize": _initialize,
    "ping": lambda session, params: {},
    "tools/list": lambda session, params: {"tools": [tool_entry(t) for t in session.tools]},
    "tools/call": _call_tool,
}


def dispatch(session: Session, message: dict) -> dict | None:
    """Answer one JSON-RPC message; None for a notification. ApiError (403 scope) propagates to the transport."""
    check_envelope(message)
    request_id = message.get("id")
    method = METHODS.get(message["method"])
    if is_notification(message):
        return None
    if method is None:
        return error_response(request_id, METHOD_NOT_FOUND, "No such method: this server answers "
                              f"{', '.join(METHODS)}.")
    params = message.get("params") or {}
    if not isinstance(params, dict):
        return error_response(request_id, INVALID_PARAMS, "params is an object.")
    try:
        return {"jsonrpc": "2.0", "id": request_id, "result": method(session, params)}
    except RpcError as error:
        return error_response(request_id, error.code, error.message, error.data)
    except ApiError:
        raise
    except Exception as exc:  # noqa: BLE001 - a failing tool is a JSON-RPC error, not a crashed server
        import logging

        logging.getLogger(__name__).exception("Tool failed")
        return error_response(request_id, INTERNAL_ERROR, f"The tool failed: {exc.__class__.__name__}.")
