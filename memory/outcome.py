"""What one tool call comes to: an answer, a tool error, or a refusal.

`dispatch.call` returns one `Outcome` for every expected end of a call, and each surface turns it into its own
answer in one place: memory/routes/api.py into the HTTP answer of /v1/memory/<tool>, mcp_server/protocol.py
into the JSON-RPC response (for /v1/mcp and the stdio server alike), console/playground.py into its page. An
unexpected exception is not an outcome: it propagates to the surface, which logs it and answers that the tool
failed (`failure_message`), or lets Django answer 500.
"""

import json
from dataclasses import dataclass, field
from http import HTTPStatus

from accounts.errors import ApiError

from .errors import CannotAnswer

ANSWER = "answer"  # the tool ran and answered
TOOL_ERROR = "tool_error"  # the tool ran and memory cannot answer (CannotAnswer): over MCP a result with isError
REFUSAL = "refusal"  # the call was refused before an answer: bad arguments, insufficient scope


@dataclass(frozen=True)
class Outcome:
    """One tool call's end, as every surface answers it.

    `body` is the JSON every surface sends: the tool's answer, or `{error, message, …details}` for a tool
    error or a refusal. `status` is the HTTP status /v1/memory/<tool> answers with: 200, or the error's own
    (404 memory cannot answer, 400 bad arguments, 403 insufficient scope, 503 unavailable), and `headers`
    the HTTP headers the error adds (Retry-After).
    """

    kind: str
    body: dict
    status: int = HTTPStatus.OK
    headers: dict = field(default_factory=dict)

    @classmethod
    def answer(cls, body: dict) -> "Outcome":
        """The tool's answer."""
        return cls(ANSWER, body)

    @classmethod
    def of_error(cls, error: ApiError) -> "Outcome":
        """A tool error when memory cannot answer (CannotAnswer); any other ApiError is a refusal."""
        kind = TOOL_ERROR if isinstance(error, CannotAnswer) else REFUSAL
        return cls(kind, error.as_dict(), error.status, dict(error.headers))

    @property
    def error(self) -> str | None:
        """The stable error code of a tool error or a refusal; None for an answer."""
        return None if self.kind == ANSWER else self.body["error"]

    @property
    def message(self) -> str:
        """The human words of a tool error or a refusal; empty for an answer."""
        return "" if self.kind == ANSWER else self.body["message"]

    @property
    def text(self) -> str:
        """The body as JSON text: the HTTP body and the MCP text block are this same string."""
        return json.dumps(self.body, ensure_ascii=False)


def failure_message(error: Exception) -> str:
    """What a surface says when a tool crashed: the exception's class, never its text (it may quote data)."""
    return f"The tool failed: {error.__class__.__name__}."
