"""The read backlog reads the project's end users once, as an array its unread items are matched against,
rather than in a join the planner orders by the statistics: statistics taken while nothing was unread (as
after an ANALYZE of a memory fully read) have it scan the end users once for every unread item."""

from importlib import import_module

from django.db import migrations

READ_BACKLOG = """
CREATE OR REPLACE FUNCTION twin_read_backlog(of_project bigint)
RETURNS TABLE (items bigint, characters bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT count(*), coalesce(sum(i.characters), 0)::bigint FROM memory_item i
    WHERE i.end_user_id = ANY (ARRAY(SELECT e.id FROM accounts_enduser e WHERE e.project_id = of_project))
      AND i.read_at IS NULL AND i.failed_version <> i.version
$$;
"""

# Back to 0013's (its comment set again, unchanged).
EARLIER = import_module("memory.migrations.0013_read_backlog").READ_BACKLOG.replace(
    "CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"
)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0019_backlog_from_the_index"),
    ]

    operations = [migrations.RunSQL(READ_BACKLOG, EARLIER)]
