"""Search right after a memory is written, while PostgreSQL's statistics were taken before it was: a new end
user then looks as rare as a thread, and nothing may let the planner find a candidate's neighbours by
reading through all of the end user's passages (each search's 150-odd lookups did, doubling a search of 500
passages and reading a big memory whole, until autovacuum analyzed the table again)."""

import json

import pytest
from django.db import connection, connections

from accounts.models import EndUser
from memory.selectors import scoped
from twin.database import DEFAULT, OWNER

pytestmark = pytest.mark.django_db(transaction=True, databases=[DEFAULT, OWNER])

# A million passages of a million end users: any one end user's look like a single row.
_TABLE = "'schemaname', 'public', 'relname', 'memory_passage'"
STALE_STATISTICS = [
    f"relation_stats({_TABLE}, 'reltuples', 1000000::real, 'relpages', 50000::integer)",
    f"attribute_stats({_TABLE}, 'attname', 'end_user_id', 'inherited', false, 'null_frac', 0::real, "
    "'n_distinct', -1::real)",
]


def _rows_discarded(plan: dict) -> int:
    """The passages that repeated lookups of a plan (EXPLAIN ANALYZE's JSON) read and then threw away."""
    own = 0
    if plan.get("Relation Name") == "memory_passage" and plan.get("Actual Loops", 0) > 1:
        own = round(plan.get("Rows Removed by Filter", 0) * plan["Actual Loops"])
    return own + sum(_rows_discarded(child) for child in plan.get("Plans", []))


def test_a_search_finds_neighbours_by_their_thread_whatever_the_statistics_say(api, project):
    turns = [{"text": f"Ana: On day {n} I watered the tomatoes and read a chapter of Dune.", "id": f"t{n}",
              "kind": "message", "session": f"s{n % 3}", "author": "Ana"} for n in range(150)]
    api.add(*turns)
    end_user = EndUser.objects.get(project=project, external_id="u_1")
    statements = []

    def capture(execute, sql, params, many, context):
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connections[OWNER].cursor() as owner:
        try:
            for statistics in STALE_STATISTICS:
                owner.execute(f"SELECT pg_restore_{statistics}")
            with connection.execute_wrapper(capture):
                assert api.tool("search", query="When did Ana read Dune?").status_code == 200
            sql, params = next((s, p) for s, p in statements if s.lstrip().startswith("WITH nearest AS"))
            with scoped(project.pk, end_user.pk), connection.cursor() as cursor:
                cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
                plan = cursor.fetchone()[0]
        finally:
            owner.execute("ANALYZE memory_passage")  # the real statistics, for the tests after this one
    plan = plan if isinstance(plan, list) else json.loads(plan)
    assert _rows_discarded(plan[0]["Plan"]) == 0
