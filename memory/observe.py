"""What a tool call says about itself to the operator: the fields every log line of the call carries (the
project's slug, the credential's prefix, the surface and the tool), and its count and latency in the metrics.
Called by dispatch.call, the one path of every call, beside where usage is counted; never an end user's id,
an argument or any text."""

import contextvars
import time

from twin import metrics
from twin.logs import bind

from . import usage
from .outcome import Outcome

_started: contextvars.ContextVar[float] = contextvars.ContextVar("call_started", default=0.0)


def call_started(counted: usage.Call) -> None:
    """Bind the call's fields to the log context of the request (or stdio line) it serves; start its clock."""
    _started.set(time.perf_counter())
    bind(
        project=counted.context.project.slug,
        credential=usage.credential(counted.context),
        surface=counted.surface,
        tool=counted.tool,
    )


def call_ended(counted: usage.Call, outcome: Outcome) -> None:
    """Count the call by its status (ok, or the error's stable code) with its latency."""
    metrics.tool_call_observed(
        surface=counted.surface,
        tool=counted.tool,
        status=outcome.error or "ok",
        revision=counted.revision,
        seconds=time.perf_counter() - _started.get(),
    )
