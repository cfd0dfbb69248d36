"""GET /v1/me and /healthz."""

from http import HTTPStatus

import redis
from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from .auth import ContextAuthentication


class MeView(APIView):
    authentication_classes = [ContextAuthentication]

    @extend_schema(
        summary="The request's context",
        description="The project, end user and access that this key and X-Twin-Account reach.",
        responses=inline_serializer(
            "Me",
            {
                "project": serializers.DictField(),
                "end_user": serializers.DictField(),
                "access": serializers.ChoiceField(["read", "write"]),
                "key": serializers.DictField(),
            },
        ),
    )
    def get(self, request):
        return Response(request.auth.as_dict())


def healthz(request):
    """Checks the database and Redis; 503 naming whichever is down."""
    checks = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:  # noqa: BLE001 - any failure means down
        checks["database"] = f"down: {exc.__class__.__name__}"
    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1).ping()
        checks["redis"] = "ok"
    except Exception as exc:  # noqa: BLE001 - any failure means down
        checks["redis"] = f"down: {exc.__class__.__name__}"
    ok = all(value == "ok" for value in checks.values())
    return JsonResponse(
        {"status": "ok" if ok else "down", **checks}, status=HTTPStatus.OK if ok else HTTPStatus.SERVICE_UNAVAILABLE
    )
