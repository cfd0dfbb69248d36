"""Sizing from the environment: gunicorn.conf.py's workers and threads, and `checkconnections`, which `make run`
calls so that a configuration the database could not serve refuses to start."""

import io
import os
import subprocess
import sys

from django.conf import settings
from django.core.management import call_command

from tests.worker import ROOT


def run(*args: str, **env) -> subprocess.CompletedProcess:
    environment = {
        **os.environ,
        "TWIN_PROCESS": "command",
        "TWIN_DB_NAME": settings.DATABASES["default"]["NAME"],
        **env,
    }
    return subprocess.run(args, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120)


def test_checkconnections_adds_up_the_defaults_and_lets_them_start(db):
    out = io.StringIO()
    call_command("checkconnections", stdout=out)
    assert "web: 2 workers x pool of 4 = 8" in out.getvalue()
    assert "imports: 1 workers x 1 = 1" in out.getvalue(), "the import's worker counts too"
    assert "17 connections at most" in out.getvalue()


def test_checkconnections_refuses_more_than_the_server_takes(db):
    done = run(sys.executable, "manage.py", "checkconnections", WEB_WORKERS="40", DB_POOL_MAX="10")
    assert done.returncode == 1
    assert "409 connections at most" in done.stderr and "WEB_WORKERS" in done.stderr


def test_gunicorn_takes_its_workers_threads_and_address_from_the_environment():
    done = run(
        sys.executable,
        "-m",
        "gunicorn",
        "-c",
        "gunicorn.conf.py",
        "--print-config",
        WEB_WORKERS="3",
        WEB_THREADS="12",
        PORT="8123",
    )
    config = {
        name.strip(): value.strip() for name, _, value in (line.partition("=") for line in done.stdout.splitlines())
    }
    assert done.returncode == 0, done.stderr
    assert (config["workers"], config["threads"], config["worker_class"]) == ("3", "12", "gthread")
    assert config["bind"] == "['127.0.0.1:8123']" and config["timeout"] == "30"
