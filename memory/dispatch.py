"""One call of one tool, for every surface: the path a call takes once its caller is known.

A surface (memory/routes/api.py, mcp_server/protocol.py for HTTP and stdio, the console's playground) reads
the request and turns the credential into a Context (accounts/auth.py, which asks the rate limiter once) and
finds the tool in the registry (tools.py). From there, here, in this order and once each: the access is
checked, the arguments validated, the end user's memory opened (found, or created by an add, then scoped:
selectors.py), the service answers or raises, the call is counted (usage.py), and the one Outcome goes back
for the surface to render.
"""

from accounts.auth import Context
from accounts.errors import ApiError
from twin.unavailable import unavailable_from

from . import observe, usage
from .errors import InsufficientScope
from .outcome import ANSWER, Outcome
from .selectors import memory_in_scope, memory_to_write
from .tools import Tool
from .validation import validate


def call(tool: Tool, context: Context, arguments, *, surface: str = "http", revision: str = "") -> Outcome:
    """Run `tool` for the caller `context` with `arguments` as sent, on `surface` (http, mcp, stdio, console)
    speaking the MCP protocol `revision` ("" off MCP).

    Returns the call's one outcome: the answer, the tool error (memory cannot answer) or the refusal (bad
    arguments, insufficient scope, or unavailable: busy or a dependency down, twin/unavailable.py). An
    unexpected exception is counted and propagates to the surface, which logs it and answers that the tool
    failed.
    """
    counted = usage.Call(context, tool.name, surface, revision)
    observe.call_started(counted)
    with usage.counting(counted):
        try:
            outcome = Outcome.answer(_answer(tool, context, arguments, counted))
        except ApiError as expected:  # raised where it is found, deep in a service; answered from here on
            outcome = Outcome.of_error(expected)
        except Exception as error:
            busy = unavailable_from(error)
            if busy is None:
                usage.record(counted, error="internal", message=error.__class__.__name__)
                raise
            # Not counted: the database it would be counted in is what is out, and waiting for it again would
            # make a fast 503 slow.
            return Outcome.of_error(busy)
    if outcome.kind != ANSWER or tool.writes:  # an answered read was counted in its own transaction
        counts = usage.write_counts(outcome.body) if tool.writes else {}
        usage.record(counted, error=outcome.error, message=outcome.message, **counts)
    observe.call_ended(counted, outcome)
    return outcome


def _answer(tool: Tool, context: Context, arguments, counted: usage.Call) -> dict:
    """The tool's answer, or an ApiError: InsufficientScope, InvalidArguments or CannotAnswer."""
    if tool.writes and not context.can_write:
        raise InsufficientScope(tool.name)
    arguments = {**tool.defaults(), **validate(tool.input_schema, arguments)}
    if tool.writes:
        return tool.run(memory=memory_to_write(context, create=tool.creates_memory), **arguments)
    with memory_in_scope(context) as memory:
        answer = tool.run(memory=memory, **arguments)
        usage.record_read(counted)
    return answer
