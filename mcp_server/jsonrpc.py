"""JSON-RPC 2.0 itself, as both MCP eras use it: error codes, the two response shapes, and the envelope check.

Nothing here knows MCP's methods or eras; protocol.py and era.py build on it.
"""

from twin.requestid import current_request_id

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class RpcError(Exception):
    """A message the protocol itself refuses (not JSON-RPC, no such tool): answered as a JSON-RPC error.

    `status` is the HTTP status it is sent with, when the era gives it one of its own (2026-07-28 maps codes
    to statuses); None leaves the status to the caller.
    """

    def __init__(self, code: int, message: str, data=None, status: int | None = None):
        super().__init__(message)
        self.code, self.message, self.data, self.status = code, message, data, status


def error_response(request_id, code: int, message: str, data=None) -> dict:
    """A JSON-RPC error response; `data` carries the details when there are any, and the HTTP request's id
    (X-Request-Id) when there is one."""
    error = {"code": code, "message": message}
    http_request_id = current_request_id()
    if http_request_id is not None and (data is None or isinstance(data, dict)):
        data = {**(data or {}), "request_id": http_request_id}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def result_response(request_id, result: dict) -> dict:
    """A JSON-RPC result response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def is_notification(message: dict) -> bool:
    """A message with no id: it is answered with nothing (HTTP 202, no line on stdio)."""
    return "id" not in message


def valid_unicode(value: str) -> bool:
    """No lone surrogate: a string no answer could encode would crash the reply that echoes it."""
    return not any("\ud800" <= c <= "\udfff" for c in value)


def _valid_id(value) -> bool:
    """A string in valid Unicode or an integer."""
    if isinstance(value, str):
        return valid_unicode(value)
    return isinstance(value, int) and not isinstance(value, bool)


def reply_id(message):
    """The id an answer to `message` carries: its own when usable, else null (never a bad one echoed)."""
    return message["id"] if isinstance(message, dict) and _valid_id(message.get("id")) else None


def check_envelope(message) -> None:
    """Raise INVALID_REQUEST unless `message` is a JSON-RPC 2.0 request or notification."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        raise RpcError(INVALID_REQUEST, 'Not a JSON-RPC 2.0 request: it needs jsonrpc "2.0" and a method.')
    if "id" in message and not _valid_id(message["id"]):
        raise RpcError(INVALID_REQUEST, "A request id is a string (valid Unicode) or an integer.", {"field": "id"})
    if "params" in message and not isinstance(message["params"], (dict, list)):
        raise RpcError(INVALID_REQUEST, "params, when given, is an object.")
