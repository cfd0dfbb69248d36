"""Query plans under the statistics PostgreSQL may hold: statistics restored for a test (PostgreSQL 18's
pg_restore_relation_stats and pg_restore_attribute_stats, as twin_owner), analyzed afresh after it, and a
statement's plan as EXPLAIN ANALYZE runs it."""

import contextlib
import json
from collections.abc import Iterator

from django.db import connections

from twin.database import OWNER


def relation(table: str, **values: str) -> str:
    """A relation's (or an index's) statistics: values as SQL literals, e.g. reltuples="0::real"."""
    return _restore("relation", table, values)


def attribute(table: str, column: str, **values: str) -> str:
    """A column's statistics: values as SQL literals, e.g. null_frac="0::real"."""
    return _restore("attribute", table, {"attname": f"'{column}'", "inherited": "false", **values})


def _restore(kind: str, table: str, values: dict[str, str]) -> str:
    pairs = "".join(f", '{name}', {value}" for name, value in values.items())
    return f"SELECT pg_restore_{kind}_stats('schemaname', 'public', 'relname', '{table}'{pairs})"


@contextlib.contextmanager
def statistics(*restored: str, tables: tuple[str, ...]):
    """Inside the block, the planner sees the `restored` statistics; after it, `tables` are analyzed again,
    so the tests after this one plan from the real ones."""
    with connections[OWNER].cursor() as cursor:
        try:
            for statement in restored:
                cursor.execute(statement)
            yield
        finally:
            cursor.execute(f"ANALYZE {', '.join(tables)}")


def explain(cursor, sql: str, params=None) -> dict:
    """The plan's top node, run (EXPLAIN ANALYZE, as JSON)."""
    cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
    found = cursor.fetchone()[0]
    return (found if isinstance(found, list) else json.loads(found))[0]["Plan"]


def nodes(plan: dict) -> Iterator[dict]:
    """A plan's nodes, the top one first."""
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)
