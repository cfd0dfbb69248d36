"""The HTTP routes POST /v1/memory/<name>, one per tool, generated from the registry."""

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.views import APIView

from accounts.auth import ContextAuthentication

from ..dispatch import call
from ..outcome import Outcome
from ..tools import Tool

ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "error": {"type": "string"},
        "message": {"type": "string"},
        "field": {
            "type": "string",
            "description": "A refusal's field at fault, such as items[0].text, or for an import item.at.",
        },
        "line": {"type": "integer", "minimum": 1, "description": "An import's refusal: the file's line at fault."},
        "bound": {"description": "The bound that was passed: a number, or a name such as ISO 8601."},
        "setting": {
            "type": "string",
            "description": "An import over the project's read backlog cap: its "
            "setting, READ_BACKLOG_ITEMS or READ_BACKLOG_CHARACTERS.",
        },
        "retry_after": {"type": "integer", "description": "A 429 or 503: seconds to wait, as Retry-After says."},
    },
    "required": ["error", "message"],
}


def http_answer(outcome: Outcome) -> HttpResponse:
    """The HTTP answer to a tool call's outcome: its JSON with its status (200, or the error's own 4xx).

    The one place /v1/memory/<tool> turns an outcome into a response; the body is byte for byte the text an
    MCP result carries; a 429 or 503 says when to try again in Retry-After.
    """
    response = HttpResponse(outcome.text, status=outcome.status, content_type="application/json")
    for name, value in outcome.headers.items():
        response[name] = value
    return response


def tool_view(tool: Tool):
    """A view that authenticates, runs the tool through the registry, and answers its JSON."""

    class ToolView(APIView):
        authentication_classes = [ContextAuthentication]

        @extend_schema(
            operation_id=tool.name,
            summary=tool.title,
            description=tool.description,
            request={"application/json": tool.input_schema},
            responses={
                200: OpenApiResponse(tool.answer_schema, description="The tool's answer, as JSON."),
                400: OpenApiResponse(ERROR_SCHEMA, description="Bad arguments: names the field and the bound."),
                401: OpenApiResponse(ERROR_SCHEMA, description="No key, or not a key this service issued."),
                403: OpenApiResponse(ERROR_SCHEMA, description="A read key on a route that writes."),
                404: OpenApiResponse(ERROR_SCHEMA, description="Memory holds no answer: why, and what exists."),
                409: OpenApiResponse(
                    ERROR_SCHEMA,
                    description="The item named was stored with a date that cannot "
                    "be read back (before dates were bounded): names the field.",
                ),
                503: OpenApiResponse(
                    ERROR_SCHEMA,
                    description="Busy, or a dependency is down: try again after "
                    "Retry-After seconds (also retry_after in the body).",
                ),
                429: OpenApiResponse(
                    ERROR_SCHEMA,
                    description="Over the key's rate limit, or the project's read "
                    "backlog is full: retry_after (and Retry-After) says when to try again.",
                ),
            },
            tags=["memory"],
        )
        def post(self, request):
            return http_answer(call(tool, request.auth, request.data))

    ToolView.__name__ = ToolView.__qualname__ = f"{tool.route.title()}View"
    return ToolView.as_view()
