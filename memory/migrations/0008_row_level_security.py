"""Row-level security on every memory table: the second wall (docs/architecture.md "Tenancy, twice").

A row is visible, and may be written, only when its end user belongs to the project of this transaction's
scope and, when the scope names an end user, is that one. The scope is two settings that only
memory.selectors.scoped sets, for one transaction (set_config(…, true)): `twin.project` and `twin.end_user`.
Both are read as NULLIF(current_setting(name, true), '')::bigint, so a missing or cleared scope shows
nothing and never raises. The usage tables are per project: their policy reads the project alone.

Every table is FORCEd, so the rule holds for its owner too unless that role has BYPASSRLS (twin_owner has:
it runs the functions below, which must see every row). The functions are the only way across end users:
the sweep's unread items, and the sizes that earn a memory its own indexes, as ids and counts, never text.

A memory table added later gets the same: ENABLE, FORCE and one policy through `end_user_in_scope`
(tests/security/test_rls.py fails for a memory model whose table lacks it).
"""

from django.db import migrations

PROJECT = "NULLIF(current_setting('twin.project', true), '')::bigint"
END_USER = "NULLIF(current_setting('twin.end_user', true), '')::bigint"


def end_user_in_scope(column: str) -> str:
    """The end user in `column` is in this transaction's scope. Two branches, of which the scope's one-time
    filter runs one: the end user alone (by primary key), or the project's end users (by project). The
    set is computed once a statement and each row looked up in it."""
    return (
        f"{column} IN (SELECT e.id FROM accounts_enduser e WHERE {END_USER} IS NOT NULL "
        f"AND e.id = {END_USER} AND e.project_id = {PROJECT} "
        f"UNION ALL SELECT e.id FROM accounts_enduser e WHERE {END_USER} IS NULL AND e.project_id = {PROJECT})"
    )


POLICIES = {
    "memory_item": end_user_in_scope("end_user_id"),
    # An item's versions are the item's: reached through it.
    "memory_itemversion": "EXISTS (SELECT 1 FROM memory_item i WHERE i.id = memory_itemversion.item_id "
    f"AND {end_user_in_scope('i.end_user_id')})",
    "memory_thread": end_user_in_scope("end_user_id"),
    "memory_passage": end_user_in_scope("end_user_id"),
    "memory_passagesentence": end_user_in_scope("end_user_id"),
    "memory_termstat": end_user_in_scope("end_user_id"),
    "memory_memorystats": end_user_in_scope("end_user_id"),
    "memory_writtenindex": end_user_in_scope("end_user_id"),
    "memory_fact": end_user_in_scope("end_user_id"),
    "memory_usageday": f"project_id = {PROJECT}",
    "memory_recenterror": f"project_id = {PROJECT}",
}


def protect(table: str, rule: str) -> migrations.RunSQL:
    return migrations.RunSQL(
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY; ALTER TABLE {table} FORCE ROW LEVEL SECURITY; "
        f"CREATE POLICY scoped ON {table} USING ({rule}) WITH CHECK ({rule});",
        f"DROP POLICY scoped ON {table}; ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY; "
        f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY;",
    )


# SECURITY DEFINER: they run as their owner, twin_owner (BYPASSRLS); the search_path is fixed so nobody can
# slip an object of theirs in front of ours. EXECUTE is twin_app's alone (twin/database_setup.py's default
# privileges).
UNREAD_ITEMS = """
CREATE FUNCTION twin_unread_items(updated_before timestamptz, max_items integer)
RETURNS TABLE (item_id bigint, project_id bigint, end_user_id bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT i.id, e.project_id, i.end_user_id FROM memory_item i JOIN accounts_enduser e ON e.id = i.end_user_id
    WHERE (i.read_at IS NULL OR i.read_version <> i.version) AND i.updated_at <= updated_before
    ORDER BY i.updated_at LIMIT max_items
$$;
COMMENT ON FUNCTION twin_unread_items(timestamptz, integer) IS
    'The sweep''s work across every end user: items whose read is behind, oldest first (memory.tasks).';
"""

MEMORY_SIZES = """
CREATE FUNCTION twin_memory_sizes(min_passages integer)
RETURNS TABLE (end_user_id bigint, passages integer)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT s.end_user_id, s.passages FROM memory_memorystats s WHERE s.passages >= min_passages
    ORDER BY s.end_user_id
$$;
COMMENT ON FUNCTION twin_memory_sizes(integer) IS
    'The beat''s work: memories of at least min_passages passages (memory.read.own_indexes).';
"""


def require_bypassrls(apps, schema_editor):
    """The functions above see every row only if their owner, the migrating role, may bypass the policies."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = current_user AND (rolsuper OR rolbypassrls)")
        bypasses = cursor.fetchone() is not None
    if not bypasses:
        raise RuntimeError(
            'Migrate as the owner role, which needs BYPASSRLS (twin_owner; README "An external '
            "PostgreSQL\"): the sweep's functions it owns must see every end user's rows."
        )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0004_grant_used_at"),
        ("memory", "0007_half_precision_vectors"),
    ]

    operations = [
        migrations.RunPython(require_bypassrls, migrations.RunPython.noop),
        *(protect(table, rule) for table, rule in POLICIES.items()),
        migrations.RunSQL(UNREAD_ITEMS, "DROP FUNCTION twin_unread_items(timestamptz, integer);"),
        migrations.RunSQL(MEMORY_SIZES, "DROP FUNCTION twin_memory_sizes(integer);"),
    ]
