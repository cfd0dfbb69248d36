"""A real Celery worker process on the real Redis, reading from this test run's database and queue."""

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def running_worker(queue: str, *, processes: int | None = None, **env):
    """Start `celery -A twin worker` for `queue` on the test database; stop it on exit. One process (solo)
    unless `processes` asks for a pool of them, as `make run` starts; a pool is killed at once, children and
    all (a child in the middle of embedding would finish its batch first), as a worker dies."""
    log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)
    # Each pytest process has such a worker beside it on the same cores: one model thread each, no nicer than
    # the tests that wait on it (the fault tests' own stack runs the production defaults).
    environment = {
        **os.environ,
        "TWIN_DB_NAME": settings.DATABASES["default"]["NAME"],
        "TWIN_QUEUE": queue,
        "TWIN_PROCESS": "worker",
        "READ_WORKER_NICENESS": "0",
        "READ_MODEL_THREADS": "1",
        **env,
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "twin",
            "worker",
            "-Q",
            queue,
            "--loglevel",
            "info",
            *(["-P", "solo"] if processes is None else ["--concurrency", str(processes)]),
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"test-{os.getpid()}-{time.time()}",
        ],
        cwd=ROOT,
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=processes is not None,
    )
    try:
        deadline = time.monotonic() + 60
        while "ready." not in Path(log.name).read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("The worker did not start:\n" + Path(log.name).read_text())
            time.sleep(0.1)
        yield Path(log.name)
    finally:
        if processes is None:
            process.terminate()
        else:
            os.killpg(process.pid, signal.SIGKILL)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        os.unlink(log.name)
