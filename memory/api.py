"""The HTTP routes POST /v1/memory/<name>, one per tool, generated from the registry."""

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.views import APIView

from accounts.auth import ContextAuthentication

from .tools import TOOLS, Tool, call, encode

ERROR_SCHEMA = {
    "type": "object",
    "properties": {"error": {"type": "string"}, "message": {"type": "string"}},
    "required": ["error", "message"],
}


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
                200: OpenApiResponse(description="The tool's answer, as JSON."),
                400: OpenApiResponse(ERROR_SCHEMA, description="Bad arguments: names the field and the bound."),
                401: OpenApiResponse(ERROR_SCHEMA, description="No key, or not a key this service issued."),
                403: OpenApiResponse(ERROR_SCHEMA, description="A read key on a route that writes."),
                404: OpenApiResponse(ERROR_SCHEMA, description="Memory holds no answer: why, and what exists."),
            },
            tags=["memory"],
        )
        def post(self, request):
            answer = call(tool, request.auth, request.data)
            return HttpResponse(encode(answer), content_type="application/json")

    ToolView.__name__ = ToolView.__qualname__ = f"{tool.route.title()}View"
    return ToolView.as_view()
