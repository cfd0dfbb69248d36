"""One error shape for every /v1/ route: a stable `error` code and a human `message`."""

from django.http import JsonResponse
from rest_framework.exceptions import UnsupportedMediaType
from rest_framework.views import exception_handler as drf_exception_handler

from twin.requestid import with_request_id


class ApiError(Exception):
    """An error a caller can act on. `details` carries structured extras (the field, the bound…)."""

    def __init__(self, status: int, error: str, message: str, **details):
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message
        self.details = details
        # An error that says when to try again says it in Retry-After too (429, 503).
        self.headers: dict[str, str] = {"Retry-After": str(details["retry_after"])} if "retry_after" in details else {}

    def as_dict(self) -> dict:
        """The error's JSON body, naming the request it answers (a caller reporting it can quote the id)."""
        return with_request_id({"error": self.error, "message": self.message, **self.details})

    def response(self) -> JsonResponse:
        response = JsonResponse(self.as_dict(), status=self.status)
        for name, value in self.headers.items():
            response[name] = value
        return response


def unsupported_media_type(context) -> ApiError:
    """415 naming the Content-Type header and the types the route reads. REST framework's own message quotes
    the header's value, a caller's text; this one says only what the route accepts."""
    view = context.get("view")
    accepted = [parser.media_type for parser in view.get_parsers()] if view is not None else ["application/json"]
    return ApiError(
        415, "unsupported_media_type", f"The body must be sent as {' or '.join(accepted)}.", field="Content-Type"
    )


def exception_handler(exc, context):
    """DRF's handler, reshaped into {error, message} so every route answers alike."""
    if isinstance(exc, UnsupportedMediaType):
        exc = unsupported_media_type(context)
    if isinstance(exc, ApiError):
        return exc.response()
    response = drf_exception_handler(exc, context)
    if response is not None:
        detail = response.data.get("detail") if isinstance(response.data, dict) else None
        code = getattr(detail, "code", None) or "error"
        response.data = {"error": str(code), "message": str(detail or response.data)}
        for name in ("field", "bound"):  # what an error class names (twin.json_limits.InvalidJsonBody)
            if hasattr(exc, name):
                response.data[name] = getattr(exc, name)
        response.data = with_request_id(response.data)
    return response
