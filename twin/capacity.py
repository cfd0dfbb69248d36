"""How many processes, threads and database connections the service runs, all from the environment, and the
connections they add up to.

One module, imported without Django, by everything that sizes the service: gunicorn.conf.py (web workers and
threads), twin/settings.py and twin/database.py (the web processes' pool, the statement timeout, Celery's
concurrency) and `manage.py checkconnections`, which `make run` calls so that a configuration the database
cannot serve refuses to start instead of answering "too many clients" under load. The defaults suit 2 cores;
README "Sizing" says how to grow them.
"""

import os
from dataclasses import dataclass


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, str(default)))


def env_float(name: str, default: float) -> float:
    return float(os.environ.get(name, str(default)))


# Web: gunicorn's gthread workers. Each process holds one model and one pool; its threads mostly wait on the
# database and on the network, so 16 of them keep 2 cores busy while no request waits for a thread.
WEB_WORKERS = env_int("WEB_WORKERS", 2)
WEB_THREADS = env_int("WEB_THREADS", 16)
WEB_TIMEOUT = env_int("WEB_TIMEOUT", 30)  # seconds a silent worker lives; a `wait` add answers within 20

# Each web process's database pool (Django's psycopg pool). A query takes milliseconds, so 4 connections
# serve 16 threads; a thread that finds none waits up to DB_POOL_TIMEOUT seconds, then the request answers
# 503 (twin/unavailable.py). Past DB_POOL_MAX_WAITING threads waiting, the pool refuses at once.
DB_POOL_MIN = env_int("DB_POOL_MIN", 2)
DB_POOL_MAX = env_int("DB_POOL_MAX", 4)
DB_POOL_TIMEOUT = env_float("DB_POOL_TIMEOUT", 2.0)
DB_POOL_MAX_WAITING = env_int("DB_POOL_MAX_WAITING", 16)
# A web request's statement that runs longer is cancelled (503): it would hold a pooled connection that
# other requests wait for. Workers have none: a big read may take longer, and holds its own connection.
DB_STATEMENT_TIMEOUT_MS = env_int("DB_STATEMENT_TIMEOUT_MS", 5000)

# Celery: prefork children, each with one persistent connection on the default alias and, while it builds a
# big memory's own indexes, one as the owner (read/own_indexes.py).
WORKER_CONCURRENCY = env_int("WORKER_CONCURRENCY", 2)
CONNECTIONS_PER_WORKER_CHILD = 2
BEAT_CONNECTIONS = 1  # `celery worker -B`: the beat, counted though its file scheduler needs none today
# Imports: worker processes of their own on the import's queue (memory/portability/jobs.py), one import at a
# time each on one connection (`make run` starts one).
IMPORT_WORKERS = env_int("IMPORT_WORKERS", 1)
CONNECTIONS_PER_IMPORT_WORKER = 1
COMMAND_CONNECTIONS = env_int("COMMAND_CONNECTIONS", 3)  # manage.py commands an operator runs alongside
# Connections kept free below the server's max_connections (beside its superuser-reserved ones): psql for an
# operator, a migration, a monitoring probe.
CONNECTION_MARGIN = env_int("DB_CONNECTION_MARGIN", 5)


@dataclass(frozen=True)
class ConnectionBudget:
    """The most connections each part of one machine's configuration can open at once."""

    web: int
    workers: int
    beat: int
    imports: int
    commands: int

    @property
    def total(self) -> int:
        return self.web + self.workers + self.beat + self.imports + self.commands

    def lines(self) -> list[str]:
        """The sum, part by part, as `checkconnections` prints it."""
        return [
            f"web: {WEB_WORKERS} workers x pool of {DB_POOL_MAX} = {self.web}",
            f"workers: {WORKER_CONCURRENCY} children x {CONNECTIONS_PER_WORKER_CHILD} = {self.workers}",
            f"beat: {self.beat}",
            f"imports: {IMPORT_WORKERS} workers x {CONNECTIONS_PER_IMPORT_WORKER} = {self.imports}",
            f"commands: {self.commands}",
            f"total: {self.total}",
        ]


def connection_budget() -> ConnectionBudget:
    """What this configuration (web workers x pool max + worker children + beat + import workers + commands)
    can open."""
    return ConnectionBudget(
        web=WEB_WORKERS * DB_POOL_MAX,
        workers=WORKER_CONCURRENCY * CONNECTIONS_PER_WORKER_CHILD,
        beat=BEAT_CONNECTIONS,
        imports=IMPORT_WORKERS * CONNECTIONS_PER_IMPORT_WORKER,
        commands=COMMAND_CONNECTIONS,
    )


def waiting_adds_max(threads: int = WEB_THREADS) -> int:
    """How many `wait: true` adds of one web process may wait at once: half its threads, so waits never
    take the threads every other request needs (beyond it an add answers at once, searchable: false)."""
    return max(1, threads // 2)
