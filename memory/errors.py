"""The two ways a tool can fail short of crashing."""

from accounts.errors import ApiError


class InvalidArguments(ApiError):
    """The arguments broke the tool's schema: names the field and the bound. HTTP 400, MCP -32602."""

    def __init__(self, message: str, *, field: str, errors: list[dict] | None = None, **details):
        super().__init__(400, "invalid_arguments", message, field=field, **details)
        if errors and len(errors) > 1:
            self.details["errors"] = errors


class CannotAnswer(ApiError):
    """The tool ran but memory holds no answer (no memory yet, a missing path, an empty place).

    HTTP 404, MCP `isError: true`; the details say why and what exists instead.
    """

    def __init__(self, error: str, message: str, **details):
        super().__init__(404, error, message, **details)
