"""Which era of MCP a request speaks, decided per request before it is routed, and the checks of the new one.

- The handshake era: the four revisions of the wire document (2025-11-25 back to 2024-11-05), negotiated by
  `initialize`, named over HTTP by the MCP-Protocol-Version header (absent: 2024-11-05). Answered exactly as
  that document says.
- 2026-07-28: no handshake and no session. Every request carries its revision and the client's capabilities
  in `params._meta`; over HTTP the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers mirror the body, so a
  gateway can route on them, and must agree with it (basic/index, basic/versioning, transports/streamable-http).

A request is of the new era when its `_meta` names a protocol version, or its MCP-Protocol-Version header names
2026-07-28; anything else is of the handshake era, as before. protocol.dispatch routes both through one method
table and one tool registry; only the envelope differs.
"""

import base64
import binascii
import re
from dataclasses import dataclass
from http import HTTPStatus

from .jsonrpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError, valid_unicode

HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first
MODERN_VERSIONS = ("2026-07-28",)
MODERN = MODERN_VERSIONS[0]
# Every revision served, newest first: what server/discover lists and what -32022 names. The handshake ones
# belong there (the spec's own example of -32022 from a server serving both eras lists 2025-11-25): a client
# that speaks only those learns it can fall back to `initialize` rather than give up.
SUPPORTED_VERSIONS = (*MODERN_VERSIONS, *HANDSHAKE_VERSIONS)

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")  # RFC 5424's

HEADER_MISMATCH = -32020
# -32021 (a client capability missing) is never sent: no tool needs a capability of the client.
UNSUPPORTED_PROTOCOL_VERSION = -32022

VERSION_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # what Mcp-Name mirrors
_BASE64_VALUE = re.compile(r"=\?base64\?(?P<payload>.*)\?=")  # the spec's sentinel, exactly, in lower case
# -32022 echoes the version asked for (the spec, and the conformance suite, ask it of "v999.0.0" too), but
# only one shaped like a version: letters, digits and . - + _, at most 32 of them. Anything else is the
# caller's text, which may be anything (markup, a secret, kilobytes of it), and is never sent back.
_REVISION_SHAPE = re.compile(r"[\w.+-]{1,32}", re.ASCII)
_HEADER_WHITESPACE = " \t"  # optional whitespace around a field value, which HTTP excludes (RFC 9110 §5.5)

# The HTTP status of each error in the new era (transports/streamable-http): a refusal of the request is 400,
# a method not served 404. Codes not named (a tool that failed) keep the 200 the handshake era sends.
MODERN_STATUS = {
    PARSE_ERROR: HTTPStatus.BAD_REQUEST,
    INVALID_REQUEST: HTTPStatus.BAD_REQUEST,
    INVALID_PARAMS: HTTPStatus.BAD_REQUEST,
    HEADER_MISMATCH: HTTPStatus.BAD_REQUEST,
    UNSUPPORTED_PROTOCOL_VERSION: HTTPStatus.BAD_REQUEST,
    METHOD_NOT_FOUND: HTTPStatus.NOT_FOUND,
}


@dataclass(frozen=True)
class Era:
    """The revision one request is answered in, and the log level it asked for (the new era only; None: send
    no log notification, which this server never sends anyway)."""

    revision: str
    log_level: str | None = None

    @property
    def modern(self) -> bool:
        return self.revision in MODERN_VERSIONS


def _meta(message) -> dict | None:
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else None


def header(headers, name: str) -> str | None:
    """A header's value without the whitespace around it; header names are case-insensitive (Django's
    request.headers folds them). None when absent, or when there are no headers (stdio)."""
    value = None if headers is None else headers.get(name)
    return None if value is None else value.strip(_HEADER_WHITESPACE)


def decode_header_value(value: str | None) -> str | None:
    """A header value as the body would hold it: `=?base64?…?=` decoded from canonical base64 of UTF-8, any
    other value as it is. None for a malformed encoding, so it never matches a body value by accident."""
    if value is None:
        return None
    encoded = _BASE64_VALUE.fullmatch(value)
    if encoded is None:
        return value
    payload = encoded["payload"]
    try:
        decoded = base64.b64decode(payload, validate=True)
        if base64.b64encode(decoded).decode("ascii") != payload:  # non-canonical: never what a client sends
            return None
        return decoded.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def is_modern(message, headers) -> bool:
    """Whether a request is of the new era: its _meta names a protocol version, or (HTTP) its
    MCP-Protocol-Version header names a revision of the new era."""
    meta = _meta(message)
    return (meta is not None and PROTOCOL_VERSION_KEY in meta) or header(headers, VERSION_HEADER) in MODERN_VERSIONS


def _refuse(code: int, message: str, data=None) -> RpcError:
    return RpcError(code, message, data, MODERN_STATUS[code])


def _check_headers(message: dict, version, headers) -> None:
    """The mirrored headers agree with the body, or HeaderMismatch (transports/streamable-http, Server
    Validation): a gateway routing on a header must never see a request the server then runs otherwise."""
    if header(headers, VERSION_HEADER) != version:
        raise _refuse(
            HEADER_MISMATCH,
            f"Header mismatch: {VERSION_HEADER} must be present and equal params._meta[{PROTOCOL_VERSION_KEY!r}].",
            {"header": VERSION_HEADER},
        )
    method = message["method"]
    if header(headers, METHOD_HEADER) != method:
        raise _refuse(
            HEADER_MISMATCH,
            f"Header mismatch: {METHOD_HEADER} must be present and equal the request's method.",
            {"header": METHOD_HEADER},
        )
    field = NAME_BEARING.get(method)
    body_value = message["params"].get(field) if field else None
    if body_value is not None and decode_header_value(header(headers, NAME_HEADER)) != body_value:
        raise _refuse(
            HEADER_MISMATCH,
            f"Header mismatch: {NAME_HEADER} must be present and equal "
            f"params.{field} (=?base64?…?= when it is not plain ASCII).",
            {"header": NAME_HEADER},
        )


def _invalid_meta(key: str, what: str) -> RpcError:
    return _refuse(INVALID_PARAMS, f"params._meta[{key!r}] {what}", {"field": f"params._meta.{key}"})


def modern_era(message: dict, headers) -> Era:
    """The era of a new-era request once its per-request fields pass, in the order the SDKs check them:
    _meta and its required keys (-32602), the mirrored headers over HTTP (-32020), then the revision asked
    for (-32022 naming the revisions served). clientInfo is optional; nothing is inferred from earlier
    requests."""
    meta = _meta(message)
    if meta is None:
        raise _refuse(
            INVALID_PARAMS,
            f"params._meta is required: an object naming {PROTOCOL_VERSION_KEY} and {CLIENT_CAPABILITIES_KEY}.",
            {"field": "params._meta"},
        )
    for key in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY):
        if key not in meta:
            raise _invalid_meta(key, "is required on every request.")
    version = meta[PROTOCOL_VERSION_KEY]
    if headers is not None:
        _check_headers(message, version, headers)
    if not isinstance(version, str) or not valid_unicode(version):
        raise _invalid_meta(PROTOCOL_VERSION_KEY, "is a string naming a protocol revision.")
    if version not in MODERN_VERSIONS:
        refused: dict[str, object] = {"supported": list(SUPPORTED_VERSIONS)}
        if _REVISION_SHAPE.fullmatch(version):
            refused["requested"] = version
        raise _refuse(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", refused)
    if not isinstance(meta[CLIENT_CAPABILITIES_KEY], dict):
        raise _invalid_meta(CLIENT_CAPABILITIES_KEY, "is an object (empty when the client offers none).")
    if CLIENT_INFO_KEY in meta and not isinstance(meta[CLIENT_INFO_KEY], dict):
        raise _invalid_meta(CLIENT_INFO_KEY, "is an object: the client's name and version.")
    level = meta.get(LOG_LEVEL_KEY)
    if level is not None and level not in LOG_LEVELS:
        raise _invalid_meta(LOG_LEVEL_KEY, f"is one of {', '.join(LOG_LEVELS)}.")
    return Era(version, level)
