"""Row-level security, the second wall: every memory table shows and accepts only the rows of the scope
memory.selectors.scoped sets, to the role every process (and every test) connects as.

End users A and A2 are in Alice's project P, B in Charlie's project Q. What each scope should see is read as
the tables' owner (BYPASSRLS); what it sees is an unfiltered SELECT as twin_app.
"""

import re

import pytest
from django.apps import apps
from django.db import DatabaseError, connection, connections, transaction

from accounts.models import EndUser
from memory import tasks
from memory.models import Item
from memory.query import retrieval
from memory.selectors import Memory, PassageFilters, ScopeConflict, scoped
from twin.database import APP_ROLE, DEFAULT, OWNER

pytestmark = pytest.mark.django_db(transaction=True, databases=[DEFAULT, OWNER])

MEMORY_MODELS = list(apps.get_app_config("memory").get_models())
# How each memory table reaches its tenant: a row's end user, its item's end user, or its project alone.
OWNER_COLUMNS = ("end_user", "item", "project")
TRUTH = {
    "end_user": "SELECT t.id, t.end_user_id AS end_user, e.project_id AS project FROM {table} t "
    "JOIN accounts_enduser e ON e.id = t.end_user_id",
    "item": "SELECT t.id, i.end_user_id AS end_user, e.project_id AS project FROM {table} t "
    "JOIN memory_item i ON i.id = t.item_id JOIN accounts_enduser e ON e.id = i.end_user_id",
    "project": "SELECT t.id, NULL AS end_user, t.project_id AS project FROM {table} t",
}


def owner_column(model) -> str:
    names = {field.name for field in model._meta.fields}
    found = next((name for name in OWNER_COLUMNS if name in names), None)
    assert found, f"{model.__name__}: no end user, item or project to scope it by; give it one and a policy"
    return found


def rows(cursor, sql: str, params=()) -> list[dict]:
    cursor.execute(sql, params)
    columns = [column.name for column in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def truth(model) -> list[dict]:
    """Every row of the model's table with its end user and project, as the owner sees them."""
    with connections[OWNER].cursor() as cursor:
        return rows(cursor, TRUTH[owner_column(model)].format(table=model._meta.db_table))


def visible(model, project_id=None, end_user_id=None) -> set[int]:
    """The ids an unfiltered SELECT returns as twin_app: in the scope given, or in none."""
    sql = f"SELECT id FROM {model._meta.db_table}"
    if project_id is None:
        with connection.cursor() as cursor:
            return {row["id"] for row in rows(cursor, sql)}
    with scoped(project_id, end_user_id), connection.cursor() as cursor:
        return {row["id"] for row in rows(cursor, sql)}


# A refused import: its job's row stays, nothing of the file is stored.
IMPORT_FILE = b'{"format": "twin-memory-export", "version": 1, "items": 1}\n{"item": {"id": "no-text"}}\n'


def fill(api):
    """Rows in every memory table for the api's end user: items, an edit (a version), a passage long enough
    for its sentences to get vectors of their own, facts, statistics, the written index, usage with an
    error, and an import's job."""
    api.add(
        {
            "text": "I live in Porto. I work at Acme as a designer.",
            "id": "home",
            "author": "Alice Chen",
            "at": "2024-01-10",
        }
    )
    api.add(
        {
            "text": "I live in Lisbon. I work at Acme as a designer. " + "The studio moved to the harbour. " * 12,
            "id": "home",
            "author": "Alice Chen",
            "at": "2025-03-10",
        }
    )
    assert api.tool("grep", pattern="Lisbon", limit=99).status_code == 400  # a refused call: an error row
    imported = api.client.post(  # an import's job
        "/v1/memory/import", data=IMPORT_FILE, content_type="application/x-ndjson", headers=api.headers()
    )
    assert imported.status_code == 400, imported.content


@pytest.fixture
def tenants(api, charlie_api, project, other_project):
    """End users A and A2 of project P, B of project Q, each with rows in every memory table."""
    for caller in (api, api.as_account("u_2"), charlie_api):
        fill(caller)
    a, a2 = (EndUser.objects.get(project=project, external_id=name) for name in ("u_1", "u_2"))
    b = EndUser.objects.get(project=other_project, external_id="u_1")
    return {"P": project.pk, "Q": other_project.pk, "A": a.pk, "A2": a2.pk, "B": b.pk}


def test_the_tests_and_the_service_connect_as_a_role_the_policies_hold(db):
    with connection.cursor() as cursor:
        (me,) = rows(
            cursor, "SELECT current_user AS name, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
        )
        owned = rows(
            cursor,
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relowner = (SELECT oid FROM pg_roles "
            "WHERE rolname = current_user)",
        )
    assert me == {"name": APP_ROLE, "rolsuper": False, "rolbypassrls": False}
    assert owned == []


def test_every_memory_table_has_row_level_security_forced_and_one_policy(db):
    tables = [model._meta.db_table for model in MEMORY_MODELS]
    with connection.cursor() as cursor:
        found = {
            row["relname"]: row
            for row in rows(
                cursor,
                """
            SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
                   (SELECT count(*) FROM pg_policy p WHERE p.polrelid = c.oid) AS policies,
                   (SELECT bool_and(p.polcmd = '*' AND pg_get_expr(p.polqual, p.polrelid)
                                    = pg_get_expr(p.polwithcheck, p.polrelid))
                    FROM pg_policy p WHERE p.polrelid = c.oid) AS same_check
            FROM pg_class c WHERE c.relname = ANY(%s)""",
                [tables],
            )
        }
    for table in tables:
        assert found[table] == {
            "relname": table,
            "relrowsecurity": True,
            "relforcerowsecurity": True,
            "policies": 1,
            "same_check": True,
        }, f"{table} is not protected"


def test_each_scope_sees_exactly_its_own_rows_in_every_table(tenants):
    t = tenants
    scopes = {  # scope -> whose rows it sees: end users (tables of end users), project (usage tables)
        (t["P"], t["A"]): ({t["A"]}, t["P"]),
        (t["P"], t["A2"]): ({t["A2"]}, t["P"]),
        (t["P"], None): ({t["A"], t["A2"]}, t["P"]),
        (t["Q"], t["B"]): ({t["B"]}, t["Q"]),
        (t["P"], t["B"]): (set(), t["P"]),  # an end user of another project: none of theirs
    }
    for model in MEMORY_MODELS:
        every = truth(model)
        by_project = owner_column(model) == "project"
        owners = {row["project"] if by_project else row["end_user"] for row in every}
        expected_owners = {t["P"], t["Q"]} if by_project else {t["A"], t["A2"], t["B"]}
        assert owners >= expected_owners, f"fill() leaves {model.__name__} without rows for every tenant"
        for (project, end_user), (end_users, its_project) in scopes.items():
            mine = {
                row["id"]
                for row in every
                if (row["project"] == its_project if by_project else row["end_user"] in end_users)
            }
            assert visible(model, project, end_user) == mine, (model.__name__, project, end_user)
        assert visible(model) == set(), f"{model.__name__} shows rows with no scope"


def test_a_row_of_another_tenant_cannot_be_written(tenants):
    t = tenants
    b_item = next(row["id"] for row in truth(Item) if row["end_user"] == t["B"])
    elsewhere = {"end_user": {"end_user_id": t["B"]}, "item": {"item_id": b_item}, "project": {"project_id": t["Q"]}}
    for model in MEMORY_MODELS:
        with scoped(t["P"], t["A"]):
            row = model._default_manager.order_by("pk").first()
        assert row is not None, model.__name__
        row.pk = None
        for name, value in elsewhere[owner_column(model)].items():
            setattr(row, name, value)
        with pytest.raises(DatabaseError, match="row-level security"), scoped(t["P"], t["A"]):
            row.save()


def scope_settings() -> dict:
    with connection.cursor() as cursor:
        (found,) = rows(
            cursor,
            "SELECT current_setting('twin.project', true) AS project, "
            "current_setting('twin.end_user', true) AS end_user",
        )
    return {name: value or "" for name, value in found.items()}


def test_a_connection_handed_back_carries_no_scope(tenants):
    with scoped(tenants["P"], tenants["A"]):
        assert scope_settings() == {"project": str(tenants["P"]), "end_user": str(tenants["A"])}
    assert scope_settings() == {"project": "", "end_user": ""}
    assert visible(Item) == set()


def test_a_scope_nests_in_itself_refuses_another_and_leaves_an_outer_transaction_unscoped(tenants):
    t = tenants
    with scoped(t["P"], t["A"]):
        with scoped(t["P"], t["A"]):  # a savepoint of the same scope
            assert Item.objects.count() == 1
        with pytest.raises(ScopeConflict):
            with scoped(t["Q"], t["B"]):
                pass
        assert Item.objects.count() == 1
    with transaction.atomic():
        with scoped(t["Q"], t["B"]):
            assert Item.objects.count() == 1
        assert scope_settings() == {"project": "", "end_user": ""} and Item.objects.count() == 0


def test_the_text_source_keeps_its_gin_index(tenants):
    """`@@` is LEAKPROOF (twin/database_setup.py), so the policies leave the full-text index to search."""
    memory = Memory(EndUser.objects.get(pk=tenants["A"]))
    with connections[OWNER].cursor() as cursor:  # a memory big enough for the planner to want the index
        cursor.execute(
            """
            INSERT INTO memory_passage (end_user_id, thread_id, item_id, seq, path, kind, at, author, role, title,
                about, text, item_ids, embedding, context_embedding, model)
            SELECT end_user_id, thread_id, item_id, seq + g, path || '-' || g, kind, at, author, role, title, about,
                'A walk along the canal with the dog, day ' || g, item_ids, embedding, context_embedding, model
            FROM memory_passage, generate_series(1, 5000) AS g WHERE end_user_id = %s
        """,
            [memory.end_user.pk],
        )
        cursor.execute("ANALYZE memory_passage")
    with memory.scoped(), connection.cursor() as cursor:
        plan = retrieval.explain(memory, "Who moved to Lisbon?", PassageFilters())["text"]
        indexes = re.findall(r"Index Scan (?:on|using) (\w+)", plan)
        methods = rows(
            cursor,
            "SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = ANY(%s)",
            [indexes],
        )
    assert {"amname": "gin"} in methods, plan


def test_the_sweep_finds_unread_items_in_every_project(tenants):
    t = tenants
    for project in (t["P"], t["Q"]):
        with scoped(project):
            Item.objects.update(read_version=0, read_at=None)  # as if their reads had been lost
    assert tasks.sweep_unread(older_than_seconds=0) == 3  # queued and, eagerly, read
    for project in (t["P"], t["Q"]):
        with scoped(project):
            assert all(item.is_read for item in Item.objects.all())
