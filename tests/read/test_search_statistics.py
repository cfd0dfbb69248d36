"""Search right after a memory is written, while PostgreSQL's statistics were taken before it was: a new end
user then looks as rare as a thread, and nothing may let the planner find a candidate's neighbours by
reading through all of the end user's passages (each search's 150-odd lookups did, doubling a search of 500
passages and reading a big memory whole, until autovacuum analyzed the table again)."""

import pytest
from django.db import connection

from accounts.models import EndUser
from memory.selectors import scoped
from tests import plans
from twin.database import DEFAULT, OWNER

pytestmark = pytest.mark.django_db(transaction=True, databases=[DEFAULT, OWNER])

# A million passages of a million end users: any one end user's look like a single row.
NEW_END_USER = (
    plans.relation("memory_passage", reltuples="1000000::real", relpages="50000::integer"),
    plans.attribute("memory_passage", "end_user_id", null_frac="0::real", n_distinct="-1::real"),
)


def test_a_search_finds_neighbours_by_their_thread_whatever_the_statistics_say(api, project):
    turns = [
        {
            "text": f"Ana: On day {n} I watered the tomatoes and read a chapter of Dune.",
            "id": f"t{n}",
            "kind": "message",
            "session": f"s{n % 3}",
            "author": "Ana",
        }
        for n in range(150)
    ]
    api.add(*turns)
    end_user = EndUser.objects.get(project=project, external_id="u_1")
    statements = []

    def capture(execute, sql, params, many, context):
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with plans.statistics(*NEW_END_USER, tables=("memory_passage",)):
        with connection.execute_wrapper(capture):
            assert api.tool("search", query="When did Ana read Dune?").status_code == 200
        sql, params = next((s, p) for s, p in statements if s.lstrip().startswith("WITH nearest AS"))
        with scoped(project.pk, end_user.pk), connection.cursor() as cursor:
            plan = plans.explain(cursor, sql, params)
    # the passages that repeated lookups read and then threw away
    assert (
        sum(
            round(node.get("Rows Removed by Filter", 0) * node["Actual Loops"])
            for node in plans.nodes(plan)
            if node.get("Relation Name") == "memory_passage" and node["Actual Loops"] > 1
        )
        == 0
    )
