"""The ways a tool call ends short of an answer: refused (bad arguments, insufficient scope), or run and
unable to answer. dispatch.call turns each into an `Outcome` (memory/outcome.py)."""

from http import HTTPStatus

from accounts.errors import ApiError
from accounts.scopes import SCOPE_WRITE
from memory.secrets.detect import REDACTED, find_secret

# The refusal's error code, also RFC 6750's: the same word in the body and in the WWW-Authenticate challenge.
INSUFFICIENT_SCOPE = "insufficient_scope"


def echoed(value: str) -> str:
    """How an error's message names a value the caller gave (a path, a subject, a place): quoted, or, when it
    holds a secret, by the secret's kind alone ("[redacted: AWS Access Key]"). Messages are kept among Usage's
    last errors, which every role of the project sees, so a secret pasted as a path must not be kept there."""
    kind = find_secret(value)
    return REDACTED.format(kind) if kind else repr(value)


class InvalidArguments(ApiError):
    """The arguments broke the tool's schema: names the field and the bound. HTTP 400, MCP -32602."""

    def __init__(self, message: str, *, field: str, errors: list[dict] | None = None, **details):
        super().__init__(HTTPStatus.BAD_REQUEST, "invalid_arguments", message, field=field, **details)
        if errors and len(errors) > 1:
            self.details["errors"] = errors


class InsufficientScope(ApiError):
    """A write tool called with read access (a read key, a Read only connection, a Viewer in the console).

    HTTP 403; over MCP a 403 whose challenge names the missing scope, so an OAuth client can step up to it.
    Every surface sends these same words.
    """

    def __init__(self, tool_name: str):
        super().__init__(
            HTTPStatus.FORBIDDEN,
            INSUFFICIENT_SCOPE,
            f"{tool_name} saves to memory: it needs a read and write key or a Read and save connection.",
            scope=SCOPE_WRITE,
        )


class CannotAnswer(ApiError):
    """The tool ran but memory holds no answer (no memory yet, a missing path, an empty place).

    HTTP 404, MCP `isError: true`; the details say why and what exists instead.
    """

    def __init__(self, error: str, message: str, **details):
        super().__init__(HTTPStatus.NOT_FOUND, error, message, **details)


class UnreadableItem(CannotAnswer):
    """A stored item holds a date from before dates were bounded (a UTC year past 9999 or before 1): the
    database holds it, but Python, and so psycopg, cannot read it back. Migration 0015 repairs such rows; this
    answers one met before it ran. HTTP 409 (the call is fine, the stored row is not), MCP `isError: true`;
    names the field that named the item, never its id (a caller's text)."""

    def __init__(self, *, field: str):
        super().__init__(
            "unreadable_item",
            f"{field}: that item was stored with a date this service cannot read "
            "back (from before dates were bounded); forget it and add it again, or have the "
            "operator run the migrations, which repair it.",
            field=field,
        )
        self.status = HTTPStatus.CONFLICT
