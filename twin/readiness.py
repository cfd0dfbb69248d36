"""GET /readyz: whether this process can serve now, for a load balancer. /healthz stays the liveness check.

Ready when the database answers, every migration is applied and the embedding model is loaded; 503 naming
what is missing otherwise. Redis and the workers are reported but never make it fail: the service keeps
answering without them, and a check that failed on them would take every web process out at once.
"""

from http import HTTPStatus

import redis
from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse

from memory.model import embeddings

from .celery import app as celery_app

OK = "ok"
PROBE_SECONDS = 0.5  # how long Redis and the workers are given to answer a probe
_migrated = False  # once every migration is applied it stays so for this process's code: not asked again


def _database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as error:  # noqa: BLE001 - any failure means down
        return f"down: {error.__class__.__name__}"
    return OK


def _migrations() -> str:
    global _migrated
    if not _migrated:
        try:
            executor = MigrationExecutor(connection)
            pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
        except Exception as error:  # noqa: BLE001 - unreadable: not ready
            return f"unknown: {error.__class__.__name__}"
        if pending:
            return f"{len(pending)} not applied"
        _migrated = True
    return OK


def _redis() -> str:
    try:
        redis.Redis.from_url(
            settings.REDIS_URL, socket_connect_timeout=PROBE_SECONDS, socket_timeout=PROBE_SECONDS
        ).ping()
    except Exception as error:  # noqa: BLE001 - any failure means down
        return f"down: {error.__class__.__name__}"
    return OK


def _workers() -> str:
    if celery_app.conf.task_always_eager:
        return "in process"
    try:
        answered = celery_app.control.ping(timeout=PROBE_SECONDS)
    except Exception as error:  # noqa: BLE001 - the broker away: reported, not failed on
        return f"unknown: {error.__class__.__name__}"
    assert answered is not None, "ping asks for replies, so it answers a list"
    return f"{len(answered)} answering"


def readyz(request) -> JsonResponse:
    """200 when the database, the migrations and the model are ready; 503 naming what is not."""
    database = _database()
    required = {
        "database": database,
        "migrations": _migrations() if database == OK else "unknown: the database is down",
        "model": OK if embeddings.is_loaded() else "not loaded",
    }
    ready = all(value == OK for value in required.values())
    body = {"status": "ready" if ready else "not ready", **required, "redis": _redis(), "workers": _workers()}
    return JsonResponse(body, status=HTTPStatus.OK if ready else HTTPStatus.SERVICE_UNAVAILABLE)
