from django.db import migrations

# Every project's read backlog at once, for the metrics (memory/observe.py): counts, characters and the oldest
# unread item's time per project id, across projects, which row-level security hides from twin_app.
READ_BACKLOGS = """
CREATE FUNCTION twin_read_backlogs()
RETURNS TABLE (project_id bigint, items bigint, characters bigint, oldest timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT e.project_id, count(*), coalesce(sum(i.characters), 0)::bigint, min(i.updated_at)
    FROM memory_item i JOIN accounts_enduser e ON e.id = i.end_user_id
    WHERE i.read_at IS NULL AND i.failed_version <> i.version
    GROUP BY e.project_id
$$;
COMMENT ON FUNCTION twin_read_backlogs() IS
    'Every project''s read backlog: unread items, their characters, the oldest one''s time (the metrics).';
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0025_item_request_id"),
    ]

    operations = [migrations.RunSQL(READ_BACKLOGS, "DROP FUNCTION twin_read_backlogs();")]
