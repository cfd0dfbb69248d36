"""MCP over JSON-RPC 2.0: the methods, the envelope of each era, and the dispatch shared by /v1/mcp and the
stdio server.

The server side is written here, not taken from the SDK: JSON-RPC over HTTP or stdio is small, and each
answer's status, headers and envelope are then ours to hold to the wire document. One dispatch and one
method table serve both eras (era.py decides which a request speaks, before it is routed); only the envelope
differs. Tools come from memory.tools, so no tool or bound is defined twice, and a tool call's outcome
becomes JSON-RPC in one place, `tool_reply`.
"""

import logging
from dataclasses import dataclass, field
from http import HTTPStatus

from accounts.auth import Context
from memory.dispatch import call
from memory.outcome import ANSWER, REFUSAL, Outcome, failure_message
from memory.tools import BY_NAME, TOOLS, Tool

from . import era as eras
from . import primitives
from .era import Era
from .instructions import instructions
from .jsonrpc import (  # noqa: F401 - the codes and shapes are part of this module's interface
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RpcError,
    check_envelope,
    error_response,
    is_notification,
    reply_id,
    result_response,
)

SERVER_INFO = {"name": "twin-memory", "version": "0.3.0"}
VERSIONS = eras.HANDSHAKE_VERSIONS  # the wire document's four, newest first
LATEST, OLDEST = VERSIONS[0], VERSIONS[-1]
# What is honoured, and claimed: tools, and in the new era resources (read, no subscribe: a subscription needs
# a held stream per listener, which the web tier's threads do not serve), prompts and completions. The
# handshake era's initialize answers the wire document's capabilities exactly; its clients that ask for
# resources and prompts (the SDKs do, unasked) are answered all the same.
CAPABILITIES = {"tools": {"listChanged": False}}
MODERN_CAPABILITIES = {
    **CAPABILITIES,
    "resources": {"listChanged": False},
    "prompts": {"listChanged": False},
    "completions": {},
}
# How long a client may keep server/discover's and tools/list's answers (2026-07-28 caching): five minutes,
# since the list changes only with a deploy or the credential's access. "private": the list and the
# instructions depend on the credential, so no cache may share them across credentials.
LIST_TTL_MS = 300_000
CACHE_SCOPE = "private"
READ_TTL_MS = 0  # resources/read: a file changes with each background read, so none is kept
# The tools a client loads up front rather than through its tool search (Claude Code reads this key of a tool's
# _meta): the default first lookup, and for a credential that writes, the tool it saves with on every turn.
ALWAYS_LOAD_KEY = "anthropic/alwaysLoad"
ALWAYS_LOAD = ("memory_search", "memory_add")
TOOLS_CALL = "tools/call"
# Our own codes sit in -32004..-32019: -32000..-32003 are the SDKs', -32020..-32099 the MCP specification's.
UNAVAILABLE = -32010  # busy, or a dependency down: data.retry_after says when to try again
RATE_LIMITED = -32011  # over a credential's rate limit, or the project's read backlog is full: the same data

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reply:
    """What one message gets back: the JSON-RPC response (None for a notification), and the HTTP status the
    wire document (or, in the new era, the 2026-07-28 transport) gives it: 400 for a message that is not
    JSON-RPC, 403 for a caller refused for scope, 503 (with its Retry-After header) when the service cannot
    answer now, else 200. The stdio server sends the
    response alone."""

    response: dict | None
    status: int = HTTPStatus.OK
    headers: dict = field(default_factory=dict)


@dataclass
class Session:
    """What one connection may reach: its context and the tools it lists. `revision` is the handshake-era
    revision `initialize` last negotiated: the stdio server's, since a process there is one connection (over
    HTTP the header names it on every request)."""

    context: Context
    tools: list[Tool]
    surface: str = "mcp"  # for the Usage page: mcp or stdio
    revision: str = OLDEST


def json_schema(schema):
    """An answer's schema (memory/routes/, in the OpenAPI document's dialect) as JSON Schema proper: a value
    marked `nullable` may also be null, as a client validating structuredContent must be told."""
    if isinstance(schema, list):
        return [json_schema(part) for part in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: json_schema(value) for key, value in schema.items() if key != "nullable"}
    if schema.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    return out


# Each tool's outputSchema (2026-07-28): the JSON Schema the HTTP API documents for its answer.
OUTPUT_SCHEMAS = {tool.name: json_schema(tool.answer_schema) for tool in TOOLS if tool.answer_schema}


def tool_entry(tool: Tool, *, modern: bool = False) -> dict:
    """One tool as tools/list sends it; in the new era with its outputSchema (the older revisions' entries are
    as they were)."""
    entry = {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "annotations": {"title": tool.title, **tool.annotations},
    }
    if modern and tool.name in OUTPUT_SCHEMAS:
        entry["outputSchema"] = OUTPUT_SCHEMAS[tool.name]
    if tool.name in ALWAYS_LOAD:
        entry["_meta"] = {ALWAYS_LOAD_KEY: True}
    return entry


def _initialize(session: Session, params: dict) -> dict:
    asked = params.get("protocolVersion")
    session.revision = asked if asked in VERSIONS else LATEST
    return {
        "protocolVersion": session.revision,
        "capabilities": CAPABILITIES,
        "serverInfo": SERVER_INFO,
        "instructions": instructions(can_write=session.context.can_write),
    }


def _discover(session: Session, params: dict) -> dict:
    """server/discover (2026-07-28): the revisions served, what is honoured, the instructions."""
    return {
        "supportedVersions": list(eras.SUPPORTED_VERSIONS),
        "capabilities": MODERN_CAPABILITIES,
        "instructions": instructions(can_write=session.context.can_write),
        "ttlMs": LIST_TTL_MS,
        "cacheScope": CACHE_SCOPE,
    }


def _tools_list(session: Session, params: dict) -> dict:
    return {"tools": [tool_entry(t) for t in session.tools]}


def _modern_tools_list(session: Session, params: dict) -> dict:
    return {"tools": [tool_entry(t, modern=True) for t in session.tools]}


def _of_context(answer):
    """A method of primitives.py, which needs only the connection's context."""
    return lambda session, params: answer(session.context, params)


def _kept(answer, ttl_ms: int = LIST_TTL_MS):
    """A new-era method whose result says how long it may be kept (2026-07-28 caching)."""
    return lambda session, params: {**answer(session, params), "ttlMs": ttl_ms, "cacheScope": CACHE_SCOPE}


# Resources, templates, completion and prompts, answered alike in both eras.
PRIMITIVES = {
    "resources/list": _of_context(primitives.resources_list),
    "resources/templates/list": _of_context(primitives.templates_list),
    "resources/read": _of_context(primitives.resources_read),
    "completion/complete": _of_context(primitives.complete),
    "prompts/list": _of_context(primitives.prompts_list),
    "prompts/get": _of_context(primitives.prompts_get),
}
CACHED = {"tools/list": LIST_TTL_MS, "resources/list": LIST_TTL_MS, "resources/templates/list": LIST_TTL_MS}
CACHED |= {"prompts/list": LIST_TTL_MS, "resources/read": READ_TTL_MS}

# The methods answered with a result, per era; tools/call is answered by tool_reply. In the new era
# initialize, ping and logging/setLevel are gone (404), and the lists and resources/read are cacheable.
HANDSHAKE_RESULTS = {
    "initialize": _initialize,
    "ping": lambda session, params: {},
    "tools/list": _tools_list,
    **PRIMITIVES,
}
MODERN_RESULTS = {"server/discover": _discover, "tools/list": _modern_tools_list, **PRIMITIVES}
MODERN_RESULTS |= {method: _kept(MODERN_RESULTS[method], ttl) for method, ttl in CACHED.items()}


def _result(era: Era, result: dict) -> dict:
    """A result in its era's envelope: in the new era every result says it is complete and names the server
    in its _meta (basic/index: Result Responses, Per-response protocol fields)."""
    if not era.modern:
        return result
    return {**result, "resultType": "complete", "_meta": {eras.SERVER_INFO_KEY: SERVER_INFO}}


def tool_reply(request_id, outcome: Outcome, era: Era, tool: Tool | None = None) -> Reply:
    """The JSON-RPC reply to a tools/call: the one place a tool's outcome becomes JSON-RPC, over HTTP and stdio.

    An answer is a result whose text is the HTTP route's JSON; a tool error the same with isError: true. A
    refusal is a JSON-RPC error carrying the refusal's JSON as data: bad arguments are Invalid params; a caller
    without the scope is an Invalid request that HTTP answers 403 (the MCP overview; RFC 6750 §3.1). In the new
    era bad arguments are a tool error instead, with the same JSON: 2026-07-28 reports input validation as a
    tool execution error, so the model can correct its call (server/tools, Error Handling). A call the
    service cannot serve now (503) or over a limit (429) is -32010 or -32011 (retry_reply). In the new era an
    answer of a tool with an outputSchema also carries it as structuredContent, beside the same JSON as text.
    """
    if outcome.status in RETRY_CODES:
        return retry_reply(request_id, outcome.body, outcome.status)
    if outcome.kind != REFUSAL or (era.modern and outcome.status == HTTPStatus.BAD_REQUEST):
        result = {"content": [{"type": "text", "text": outcome.text}], "isError": outcome.kind != ANSWER}
        if era.modern and outcome.kind == ANSWER and tool is not None and tool.name in OUTPUT_SCHEMAS:
            result["structuredContent"] = outcome.body
        return Reply(result_response(request_id, _result(era, result)))
    if outcome.status == HTTPStatus.BAD_REQUEST:
        return Reply(error_response(request_id, INVALID_PARAMS, outcome.message, outcome.body))
    return Reply(error_response(request_id, INVALID_REQUEST, outcome.message, outcome.body), outcome.status)


RETRY_CODES: dict[int, int] = {HTTPStatus.SERVICE_UNAVAILABLE: UNAVAILABLE, HTTPStatus.TOO_MANY_REQUESTS: RATE_LIMITED}


def retry_reply(request_id, refusal: dict, status: int = HTTPStatus.SERVICE_UNAVAILABLE) -> Reply:
    """The reply to a call that may succeed if tried again later: busy or a dependency down (503, -32010,
    twin/unavailable.py), or over a rate limit or the project's read backlog (429, -32011). Its data is {error,
    retry_after}; over HTTP it carries Retry-After. The one place MCP says so, for a tool's outcome and for a
    request refused before its dispatch alike."""
    retry_after = refusal["retry_after"]
    data = {"error": refusal["error"], "retry_after": retry_after}
    return Reply(
        error_response(request_id, RETRY_CODES[status], refusal["message"], data),
        status,
        {"Retry-After": str(retry_after)},
    )


def _tool_named(session: Session, name) -> Tool:
    """The tool a tools/call names: one this connection lists, or a write tool it hides for want of write access
    (the registry then refuses it for scope, as the HTTP route does). Any other name is Invalid params."""
    if not isinstance(name, str):
        raise RpcError(
            INVALID_PARAMS,
            "params.name is required: the tool's name, a string.",
            {"error": "invalid_arguments", "field": "name", "tools": [t.name for t in session.tools]},
        )
    tool = next((t for t in session.tools if t.name == name), None)
    if tool is None and name in BY_NAME and BY_NAME[name].writes and BY_NAME[name].mcp:
        tool = BY_NAME[name]
    if tool is None:
        raise RpcError(
            INVALID_PARAMS,
            "No tool by that name: data.tools lists the tools.",
            {"error": "unknown_tool", "field": "name", "tools": [t.name for t in session.tools]},
        )
    return tool


def _call_tool(session: Session, era: Era, request_id, params: dict) -> Reply:
    tool = _tool_named(session, params.get("name"))
    arguments = params.get("arguments")
    outcome = call(
        tool, session.context, {} if arguments is None else arguments, surface=session.surface, revision=era.revision
    )
    return tool_reply(request_id, outcome, era, tool)


def _route(session: Session, era: Era, request_id, message: dict) -> Reply:
    """Answer one request of a known era from the one method table."""
    method = message["method"]
    results = MODERN_RESULTS if era.modern else HANDSHAKE_RESULTS
    if method not in results and method != TOOLS_CALL:
        raise RpcError(METHOD_NOT_FOUND, f"No such method: this server answers {', '.join([*results, TOOLS_CALL])}.")
    params = message.get("params") or {}
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params is an object.")
    if method == TOOLS_CALL:
        return _call_tool(session, era, request_id, params)
    return Reply(result_response(request_id, _result(era, results[method](session, params))))


def _handshake_era(session: Session, message, headers) -> Era:
    """The handshake-era revision: over HTTP the MCP-Protocol-Version header's (absent: the oldest, as the
    wire document says), refused unless served; over stdio the one `initialize` negotiated."""
    if headers is None:
        return Era(session.revision)
    version = headers.get(eras.VERSION_HEADER, OLDEST)
    if version not in VERSIONS:
        # A client probing a newer revision reads this and falls back to initialize. The header is named,
        # never quoted: it is a caller's text, of any length and any characters.
        raise RpcError(
            INVALID_REQUEST,
            f"The {eras.VERSION_HEADER} header names a revision not served here.",
            {"supported": list(VERSIONS), "field": eras.VERSION_HEADER},
            HTTPStatus.BAD_REQUEST,
        )
    return Era(version)


def dispatch(session: Session, message, headers=None) -> Reply:
    """Answer one JSON-RPC message, over HTTP (`headers`: the request's) and stdio (None) alike.

    The era is decided first, then the envelope checked, then the request routed. What a caller sends or a tool
    does is always a reply, never an exception: a failing tool is a JSON-RPC internal error, logged.
    """
    modern = eras.is_modern(message, headers)
    try:
        era = None if modern else _handshake_era(session, message, headers)
        check_envelope(message)
    except RpcError as error:
        return Reply(
            error_response(reply_id(message), error.code, error.message, error.data),
            error.status or HTTPStatus.BAD_REQUEST,
        )
    if is_notification(message):
        try:
            if modern and headers is not None:  # checked as a request is, so no gateway routes it on a lie
                eras.modern_era(message, headers)
        except RpcError as error:  # answered over HTTP only (a 400 whose error has no id); stdio answers nothing
            assert error.status is not None  # modern_era refuses only with the new era's status for its code
            return Reply(error_response(None, error.code, error.message, error.data), error.status)
        return Reply(None)
    request_id = message["id"]
    try:
        era = eras.modern_era(message, headers) if modern else era
        assert era is not None  # the handshake decided it above for every request not in the new era
        return _route(session, era, request_id, message)
    except RpcError as error:
        status = error.status or (eras.MODERN_STATUS.get(error.code, HTTPStatus.OK) if modern else HTTPStatus.OK)
        return Reply(error_response(request_id, error.code, error.message, error.data), status)
    except Exception as error:
        log.exception("Tool failed")
        return Reply(error_response(request_id, INTERNAL_ERROR, failure_message(error)))
