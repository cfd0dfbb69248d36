"""Refuses an oversized /v1/ body with a JSON answer before anything reads it."""

from django.conf import settings
from django.http import JsonResponse


class BodyLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith("/v1/"):
            try:
                size = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                size = 0
            if size > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
                return JsonResponse({"error": "too_large", "message": f"The body is {size:,} bytes; at most "
                                     f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,}.",
                                     "bound": settings.DATA_UPLOAD_MAX_MEMORY_SIZE}, status=413)
        return self.get_response(request)
