"""Busy or broken is an answer, not a failure: which exceptions mean the service cannot serve a request now,
and the refusal each becomes (HTTP 503 with Retry-After; over MCP, JSON-RPC error -32010).

Three causes: every pooled database connection is in use (the pool's wait ran out, or too many already
wait), a statement ran past the web's statement_timeout, or a dependency is away (PostgreSQL refusing or
restarting, Redis where a request needs it). `unavailable_from` names them in one place; each surface turns
the result into its answer in one place: twin.middleware.UnavailableMiddleware for every Django view, the
tool call's outcome for /v1/memory/* and MCP (memory.dispatch.call, mcp_server.protocol.retry_reply).
"""

import psycopg
import redis
from django.db import InterfaceError, OperationalError
from psycopg_pool import PoolTimeout, TooManyRequests

from accounts.errors import ApiError

from . import metrics

UNAVAILABLE = "unavailable"
SERVICE_UNAVAILABLE = 503
# When to try again: a connection frees up within a request's time; a database or Redis restart takes seconds.
BUSY_RETRY_SECONDS = 1
DOWN_RETRY_SECONDS = 5


class Unavailable(ApiError):
    """The service cannot answer now, through no fault of the caller: try again after `retry_after` s."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(
            SERVICE_UNAVAILABLE, UNAVAILABLE, f"{message} Try again in {retry_after} s.", retry_after=retry_after
        )
        self.retry_after = retry_after


def _causes(error: BaseException | None):
    """The error and what it wraps (Django wraps the driver's errors in its own)."""
    while error is not None:
        yield error
        error = error.__cause__


# What a 503 can come of, in the order it is looked for: (what is raised, the cause's metric label, the words).
_CAUSES = (
    ((PoolTimeout, TooManyRequests), "pool", "Every database connection is in use.", BUSY_RETRY_SECONDS),
    ((psycopg.errors.QueryCanceled,), "statement_timeout", "The database took too long to answer.", BUSY_RETRY_SECONDS),
    (
        (OperationalError, InterfaceError, psycopg.OperationalError),
        "database",
        "The database could not answer now.",
        DOWN_RETRY_SECONDS,
    ),
    ((redis.ConnectionError, redis.TimeoutError), "redis", "Redis is not answering.", DOWN_RETRY_SECONDS),
)


def unavailable_from(error: BaseException) -> Unavailable | None:
    """The refusal `error` comes to when it means busy or a dependency away; None for any other error (a bug,
    which stays a failure and is logged as one)."""
    causes = list(_causes(error))
    for kinds, cause, message, retry_after in _CAUSES:
        if any(isinstance(found, kinds) for found in causes):
            metrics.unavailable_observed(cause)
            return Unavailable(message, retry_after)
    return None
