"""The superuser's steps, run once (`manage.py setupdb`, which `make setup` runs): the two roles, the
database owned by twin_owner, pgvector, what twin_app may do, and the embedded server's tuning.

No process that serves requests connects as a superuser: these steps are the only ones that need one. On the
embedded server `setupdb` runs them itself, as its superuser over the unix socket, and again at every
`make setup` (each step is skipped when already done, so a second run changes nothing). For an external
server, `setupdb --sql` prints the same steps as SQL for an admin to run with psql (README "An external
PostgreSQL").
"""

import os
import re
from dataclasses import dataclass

import psycopg
from psycopg.conninfo import make_conninfo
from psycopg.rows import scalar_row

from .database import APP_ROLE, OWNER_ROLE, SUPERUSER, embedded_server

TEMPLATE = "template1"  # new databases, the tests' among them, are copies of it

# The embedded server's defaults (128 MB of shared buffers) make search reread the vectors from the OS on
# every query (bench/README.md "Search latency"); these take effect from the server's next start. Not more by
# default: every TRUNCATE and DROP scans the whole buffer pool, which a much bigger pool would make the test
# suite (a TRUNCATE after every test) pay for many times over.
EMBEDDED_SETTINGS = {
    "shared_buffers": os.environ.get("EMBEDDED_PG_SHARED_BUFFERS", "1GB"),
    "effective_cache_size": "4GB",
    "maintenance_work_mem": "1GB",
}

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Step:
    """One statement, and when given, a query answering whether it is still to be done."""

    sql: str
    todo: str | None = None  # one boolean; None: harmless to run again, so always run


def _role(name: str, attributes: str) -> list[Step]:
    return [
        Step(f"CREATE ROLE {name} LOGIN;", f"SELECT NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{name}')"),
        Step(f"ALTER ROLE {name} {attributes};"),
    ]


def server_steps(database: str) -> list[Step]:
    """Run in any database: the roles and the database."""
    if not _NAME.match(database):
        raise ValueError(f"Database name {database!r}: letters, digits and _ only.")
    return [
        # It owns every table and the functions that must see every row (memory/migrations/0008), and
        # creates the test databases.
        *_role(OWNER_ROLE, "LOGIN NOSUPERUSER CREATEDB NOCREATEROLE BYPASSRLS"),
        # It serves every request, task and command: row-level security holds it to its scope.
        *_role(APP_ROLE, "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS"),
        Step(
            f'CREATE DATABASE "{database}" OWNER {OWNER_ROLE};',
            f"SELECT NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = '{database}')",
        ),
        Step(
            f'ALTER DATABASE "{database}" OWNER TO {OWNER_ROLE};',
            f"SELECT pg_get_userbyid(datdba) <> '{OWNER_ROLE}' FROM pg_database WHERE datname = '{database}'",
        ),
    ]


# A database made before the two roles existed: its tables, sequences and functions pass to twin_owner
# (sequences that belong to a column, and anything of an extension, follow their owner), and twin_app may run
# only the functions.
_HAND_OVER = f"""-- a database made before the two roles: its tables and functions pass to {OWNER_ROLE}
DO $$
DECLARE object record;
BEGIN
    FOR object IN
        SELECT c.oid::regclass AS name, c.relkind = 'S' AS is_sequence FROM pg_class c
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
          AND pg_get_userbyid(c.relowner) <> '{OWNER_ROLE}'
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                          AND d.deptype IN ('e', 'a', 'i'))
    LOOP
        EXECUTE format('ALTER %s %s OWNER TO {OWNER_ROLE}',
                       CASE WHEN object.is_sequence THEN 'SEQUENCE' ELSE 'TABLE' END, object.name);
    END LOOP;
    FOR object IN
        SELECT p.oid::regprocedure AS name FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace AND pg_get_userbyid(p.proowner) <> '{OWNER_ROLE}'
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                          AND d.deptype = 'e')
    LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO {OWNER_ROLE}', object.name);
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', object.name);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO {APP_ROLE}', object.name);
    END LOOP;
END $$;"""


def database_steps(*, template: bool = False) -> list[Step]:
    """Run in the database (and in template1, `template`, so the test databases inherit them)."""
    steps = [
        Step("CREATE EXTENSION IF NOT EXISTS vector;"),
        # `@@` (full-text match) is not LEAKPROOF, so under row-level security the planner may not use it in
        # an index scan and search's text source falls to a sequential scan of the end user's passages. It
        # raises no error that could tell anything of a row. Where an admin may not do this
        # (a hosted server), search still answers, slower on big memories.
        Step(
            "-- may be refused on a hosted server: search then answers, slower on big memories\n"
            "ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF;",
            "SELECT NOT proleakproof FROM pg_proc WHERE oid = 'pg_catalog.ts_match_vq(tsvector, tsquery)'"
            "::regprocedure",
        ),
        Step("REVOKE CREATE ON SCHEMA public FROM PUBLIC;"),  # PostgreSQL < 15 lets every role create there
        # What twin_owner creates from now on (every migration's tables and functions), twin_app may use.
        Step(
            f"ALTER DEFAULT PRIVILEGES FOR ROLE {OWNER_ROLE} "
            f"GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLES TO {APP_ROLE};"
        ),
        Step(f"ALTER DEFAULT PRIVILEGES FOR ROLE {OWNER_ROLE} GRANT USAGE, SELECT ON SEQUENCES TO {APP_ROLE};"),
        Step(f"ALTER DEFAULT PRIVILEGES FOR ROLE {OWNER_ROLE} REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;"),
        Step(f"ALTER DEFAULT PRIVILEGES FOR ROLE {OWNER_ROLE} GRANT EXECUTE ON FUNCTIONS TO {APP_ROLE};"),
    ]
    if not template:
        steps += [
            Step(_HAND_OVER),
            Step(f"GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA public TO {APP_ROLE};"),
            Step(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {APP_ROLE};"),
        ]
    return steps


def tuning_steps(shared_buffers: str | None = None) -> list[Step]:
    """The embedded server's settings (from its next start); `shared_buffers` overrides the default's."""
    wanted = {**EMBEDDED_SETTINGS, **({"shared_buffers": shared_buffers} if shared_buffers else {})}
    return [
        Step(
            f"ALTER SYSTEM SET {name} = '{value}';",
            f"SELECT coalesce((SELECT setting <> '{value}' FROM pg_file_settings WHERE name = '{name}' "
            f"AND sourcefile LIKE '%postgresql.auto.conf' ORDER BY seqno DESC LIMIT 1), true)",
        )
        for name, value in wanted.items()
    ]


def script(database: str) -> str:
    """The SQL an admin runs with psql as a superuser on an external server: the roles, the database, then
    (connected to it) what twin_app may do."""
    lines = [
        "-- twin memory, run once by a superuser: psql -v ON_ERROR_STOP=1 -f twin.sql; then give each role",
        f"-- a password as your server wants: ALTER ROLE {OWNER_ROLE} PASSWORD '…'; ALTER ROLE {APP_ROLE} …",
    ]
    lines += [step.sql for step in server_steps(database)]
    lines += [f'\\connect "{database}"']
    lines += [step.sql for step in database_steps()]
    return "\n".join(lines) + "\n"


def run(steps: list[Step], conninfo: str) -> list[str]:
    """Run the steps still to do on one database, as the superuser of `conninfo`; returns the statements run."""
    done = []
    with psycopg.connect(conninfo, autocommit=True) as conn, conn.cursor(row_factory=scalar_row) as cursor:
        for step in steps:
            if step.todo is not None and not cursor.execute(step.todo).fetchone():
                continue
            cursor.execute(step.sql)
            done.append(step.sql)
    return done


def embedded_superuser(var_dir, dbname: str) -> str:
    """A connection string for the embedded server's superuser, over its unix socket."""
    info = embedded_server(var_dir)
    return make_conninfo(host=str(info.socket_dir), port=info.port or 5432, user=SUPERUSER, dbname=dbname)


def set_up_embedded(var_dir, database: str, *, shared_buffers: str | None = None) -> list[str]:
    """Every step on the embedded server, as its superuser; returns the statements run. A throwaway server
    (the fault tests') asks for smaller `shared_buffers` than the default."""
    return (
        run(server_steps(database), embedded_superuser(var_dir, "postgres"))
        + run(database_steps(), embedded_superuser(var_dir, database))
        + run(database_steps(template=True), embedded_superuser(var_dir, TEMPLATE))
        + run(tuning_steps(shared_buffers), embedded_superuser(var_dir, "postgres"))
    )
