"""What a tool call says about itself to the operator: the fields every log line of the call carries (the
project's slug, the credential's prefix, the surface and the tool). Called by dispatch.call, the one path of
every call, beside where usage is counted; never an end user's id, an argument or any text."""

from twin.logs import bind

from . import usage


def call_started(counted: usage.Call) -> None:
    """Bind the call's fields to the log context of the request (or stdio line) it serves."""
    bind(
        project=counted.context.project.slug,
        credential=usage.credential(counted.context),
        surface=counted.surface,
        tool=counted.tool,
    )
