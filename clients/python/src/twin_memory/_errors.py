"""The client's exceptions: one class per HTTP status the API answers with, each carrying the answer's `error`
code, its field and bound, Retry-After and the request id; and a connection error naming the URL. No message
ever holds the key: messages are built from the answer's words and the URL alone."""

from __future__ import annotations

from typing import Any


class TwinMemoryError(Exception):
    """Anything the client raises for a call that did not answer."""


class ConnectionFailed(TwinMemoryError):
    """The service could not be reached (refused, reset, a name that does not resolve, TLS)."""

    def __init__(self, url: str, reason: str):
        super().__init__(f"Could not reach {url}: {reason}.")
        self.url = url
        self.reason = reason


class TimedOut(ConnectionFailed):
    """The service did not answer within the timeout."""


class ApiError(TwinMemoryError):
    """An error answer of the API: `status`, `code` (its `error`), `message`, and what it named."""

    status = 0

    def __init__(self, status: int, body: dict[str, Any], *, request_id: str | None = None, retry_after=None):
        self.status = status
        self.body = body
        self.code: str = str(body.get("error") or "error")
        self.message: str = str(body.get("message") or "")
        self.field: str | None = body.get("field")
        self.bound: Any = body.get("bound")
        self.line: int | None = body.get("line")
        self.retry_after: float | None = retry_after if retry_after is not None else body.get("retry_after")
        self.request_id = request_id
        text = f"{status} {self.code}: {self.message}"
        if request_id:
            text += f" (request {request_id})"
        super().__init__(text)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, code={self.code!r}, message={self.message!r})"


class InvalidArguments(ApiError):
    """400: an argument broke a bound; `.field` names it and `.bound` the bound (a file's bad `.line` too)."""


class Unauthorized(ApiError):
    """401: no key, a key this service did not issue, a revoked key or an expired token."""


class InsufficientScope(ApiError):
    """403: a read key (or a read-only token) on a route that writes."""


class NotFound(ApiError):
    """404: memory holds no answer (a missing path, an empty place, an unknown subject or job)."""


class NoMemory(NotFound):
    """404 no_memory: the end user has nothing stored yet."""


class Conflict(ApiError):
    """409: an import of this project is already running, or an item cannot be read back."""


class TooLarge(ApiError):
    """413: a body or a file past its bound."""


class RateLimited(ApiError):
    """429: over a rate limit or the project's read backlog; `.retry_after` says when to try again."""


class Unavailable(ApiError):
    """503: busy, or a dependency is down; `.retry_after` says when to try again."""


class ServerError(ApiError):
    """Any other error status (a 500)."""


BY_STATUS: dict[int, type[ApiError]] = {
    400: InvalidArguments,
    401: Unauthorized,
    403: InsufficientScope,
    404: NotFound,
    409: Conflict,
    413: TooLarge,
    429: RateLimited,
    503: Unavailable,
}
# A refused or failed import job's error has no status of its own: its code says which it would have been.
STATUS_OF_CODE = {"invalid_arguments": 400, "too_large": 413, "rate_limited": 429, "conflict": 409}


def error_for(status: int, body: Any, *, request_id: str | None = None, retry_after=None) -> ApiError:
    """The exception for an error answer: by status, and 404 no_memory as NoMemory."""
    if not isinstance(body, dict):
        body = {"error": "error", "message": str(body)[:500]}
    kind = BY_STATUS.get(status, ServerError)
    if status == 404 and body.get("error") == "no_memory":
        kind = NoMemory
    return kind(status, body, request_id=request_id, retry_after=retry_after)
