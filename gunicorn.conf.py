"""gunicorn's settings for the web tier, all from the environment: `gunicorn -c gunicorn.conf.py` (make run).

Sizes come from twin/capacity.py (WEB_WORKERS, WEB_THREADS, WEB_TIMEOUT; README "Sizing"), which also counts
the database connections they open; HOST and PORT say where to listen. Threads (gthread): a request mostly
waits on PostgreSQL, Redis or a model, so one process serves many at once, and idle keep-alive connections
wait in the poller without a thread. The app is loaded in each worker, never before the fork, so no two
processes share a database pool or a Redis connection.
"""

import os
import shutil
from pathlib import Path

from prometheus_client import multiprocess

from twin import capacity, process

os.environ.setdefault(process.ENVIRONMENT, process.WEB)  # the kind twin/settings.py reads: pooled, with timeouts
# Each process writes its metrics' samples here and GET /metrics sums them (twin/metrics.py). Set before any
# process imports prometheus_client's metrics, and emptied as the server starts: a dead run's counts are gone.
METRICS_DIR = Path(os.environ.get("TWIN_VAR_DIR", Path(__file__).resolve().parent / "var")) / "metrics" / "web"
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", str(METRICS_DIR))

wsgi_app = "twin.wsgi:application"
bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
worker_class = "gthread"
workers = capacity.WEB_WORKERS
threads = capacity.WEB_THREADS
timeout = capacity.WEB_TIMEOUT
graceful_timeout = capacity.WEB_TIMEOUT
keepalive = capacity.env_int("WEB_KEEPALIVE", 5)  # seconds an idle client connection is kept open
accesslog = os.environ.get("WEB_ACCESS_LOG", "-")  # "-": standard output; empty: none


def post_worker_init(worker):
    """Each web process readies the embedding model and the vectors' text table before it serves: its first
    search does not wait for them."""
    from memory.model import embeddings, half_text

    embeddings.warm_up()
    half_text.warm_up()


def on_starting(server):
    """An empty metrics directory for this run's processes."""
    directory = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)


def child_exit(server, worker):
    """A process that ended: its live gauges leave the sum."""
    multiprocess.mark_process_dead(worker.pid)
