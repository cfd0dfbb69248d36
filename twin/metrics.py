"""What the service tells Prometheus, at GET /metrics (and a worker's own port): the metrics are defined here
once, each with labels from bounded sets (a surface, a tool, a stable error code, an MCP revision), never an
end user's id, a key, an item or any text.

Under gunicorn every process writes its samples to PROMETHEUS_MULTIPROC_DIR (set by gunicorn.conf.py) and
/metrics sums them, so a scrape counts every process, not the one that answered it.
"""

import hmac
import os
import shutil
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.http import Http404, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
    start_http_server,
)

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
# Seconds from an item's add (or edit) to its being searchable: the read's lag, from under a second to hours.
LAG_BUCKETS = (0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 1800, 3600, 4 * 3600)
# Seconds from a tool call's dispatch to its answer: a search is tens of milliseconds, an add with wait seconds.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)

tool_calls = Counter(
    "twin_tool_calls",
    "Tool calls by surface, tool, outcome status (ok or the error code) and MCP revision.",
    ["surface", "tool", "status", "revision"],
)
tool_call_seconds = Histogram(
    "twin_tool_call_seconds",
    "Seconds from a tool call's dispatch to its answer, by surface, tool and MCP revision.",
    ["surface", "tool", "revision"],
    buckets=LATENCY_BUCKETS,
)

refusals = Counter(
    "twin_refusals",
    "Requests refused: 429 by the limit refused (credential, end-user), 503 by cause (pool, statement_timeout, "
    "database, redis).",
    ["status", "kind"],
)
# The database pool of each web process (a gauge per process: the pid label), as psycopg_pool counts it.
pool_size = Gauge("twin_db_pool_size", "Connections the process's pool holds.", multiprocess_mode="all")
pool_in_use = Gauge("twin_db_pool_in_use", "Connections lent out.", multiprocess_mode="all")
pool_waiting = Gauge("twin_db_pool_waiting", "Requests waiting for a connection.", multiprocess_mode="all")
pool_errors = Gauge(
    "twin_db_pool_errors",
    "Connection requests that failed (timed out) since the process began.",
    multiprocess_mode="all",
)

# The background read, counted by the processes that run it (a worker's; the web's when the read runs eagerly).
items_read = Counter("twin_items_read", "Items the background read made searchable.")
failed_reads = Counter("twin_failed_reads", "Items marked failed once their read's retries were spent.")
add_to_searchable_seconds = Histogram(
    "twin_add_to_searchable_seconds", "Seconds from an item's add or edit to its being searchable.", buckets=LAG_BUCKETS
)
texts_embedded = Counter("twin_texts_embedded", "Texts the embedding model embedded (passages, sentences, questions).")


def read_observed(lags: list[float]) -> None:
    """Count the items a slice made searchable, each with the seconds since it was added or edited."""
    if not settings.METRICS_ON:
        return
    items_read.inc(len(lags))
    for lag in lags:
        add_to_searchable_seconds.observe(lag)


def failed_reads_observed(count: int) -> None:
    if settings.METRICS_ON:
        failed_reads.inc(count)


def embedded_observed(count: int) -> None:
    if settings.METRICS_ON:
        texts_embedded.inc(count)


def serve_worker_metrics(port: int, host: str = "127.0.0.1") -> None:
    """A worker machine's own /metrics on `host`:`port` (any path answers; no token: bind it where only the
    scraper reaches), summing its pool processes' samples
    (which write to PROMETHEUS_MULTIPROC_DIR, emptied here, before the pool forks)."""
    directory = os.environ.get(MULTIPROCESS_DIR)
    registry = REGISTRY
    if directory:
        shutil.rmtree(directory, ignore_errors=True)
        Path(directory).mkdir(parents=True)
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    start_http_server(port, addr=host, registry=registry)


def unavailable_observed(cause: str) -> None:
    """Count one 503 by its cause."""
    if settings.METRICS_ON:
        refusals.labels("503", cause).inc()


def answered(request, response) -> None:
    """After each HTTP answer: a 429 counted by the limit that refused it, and the pool's gauges brought up to
    date (cheap: psycopg_pool keeps the numbers)."""
    if not settings.METRICS_ON:
        return
    if response.status_code == 429:
        standing = getattr(request, "rate_limit", None)
        refused = [w.name for w in standing.windows if w.refused] if standing is not None else []
        refusals.labels("429", refused[0] if refused else "other").inc()
    pool = getattr(connection, "pool", None)
    if pool is not None:
        stats = pool.get_stats()
        pool_size.set(stats.get("pool_size", 0))
        pool_in_use.set(stats.get("pool_size", 0) - stats.get("pool_available", 0))
        pool_waiting.set(stats.get("requests_waiting", 0))
        pool_errors.set(stats.get("requests_errors", 0))


def tool_call_observed(*, surface: str, tool: str, status: str, revision: str, seconds: float) -> None:
    """Count one tool call and its latency."""
    if not settings.METRICS_ON:
        return
    tool_calls.labels(surface, tool, status, revision or "none").inc()
    tool_call_seconds.labels(surface, tool, revision or "none").observe(seconds)


# Collectors read afresh at each scrape (the read's backlog, from the database), added by the apps that own them.
_scraped: list = []


def add_scrape_collector(collector) -> None:
    """Have `collector` (an object with collect()) read at every scrape of /metrics."""
    _scraped.append(collector)


def exposition() -> bytes:
    """Every metric in Prometheus' text format: summed over the processes' files under gunicorn, this process's
    own otherwise; then what the scrape collectors read now."""
    registry = CollectorRegistry()
    if os.environ.get(MULTIPROCESS_DIR):
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    scraped = CollectorRegistry()
    for collector in _scraped:
        scraped.register(collector)
    return generate_latest(registry) + generate_latest(scraped)


def metrics_view(request) -> HttpResponse:
    """GET /metrics for a scraper holding METRICS_TOKEN as its bearer; 404 when no token is set (the route
    does not exist) and 401 for any other bearer."""
    token = settings.METRICS_TOKEN
    if not token:
        raise Http404
    sent = request.headers.get("Authorization", "")
    if not hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
        response = HttpResponse("A bearer token is needed.\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = "Bearer"
        return response
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
