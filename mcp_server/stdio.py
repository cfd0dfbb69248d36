"""The local MCP server: newline-delimited JSON-RPC over stdin/stdout, through the same dispatch and the
same tool registry as /v1/mcp, in both eras (a 2026-07-28 request names its revision in _meta; stdio has no
headers to check). Only JSON-RPC goes to stdout; anything else a library prints goes to stderr."""

import contextlib
import json
import sys

from twin import json_limits

from . import protocol


def answer(session: protocol.Session, line: str) -> dict | None:
    """The response to one line, or None for a notification (or a blank line)."""
    if not line.strip():
        return None
    try:
        message = json_limits.loads(line)
    except json_limits.InvalidJson:
        return protocol.error_response(None, protocol.PARSE_ERROR, "The line is not JSON.")
    if isinstance(message, list):
        return protocol.error_response(None, protocol.INVALID_REQUEST, "Batches are not accepted: one message a line.")
    return protocol.dispatch(session, message).response


def serve(session: protocol.Session, stdin=None, stdout=None) -> None:
    """Answer each line of stdin until it closes."""
    stdin = stdin or sys.stdin
    out = stdout or sys.stdout
    for line in stdin:
        with contextlib.redirect_stdout(sys.stderr):
            response = answer(session, line)
        if response is not None:
            out.write(json.dumps(response, ensure_ascii=False) + "\n")
            out.flush()
