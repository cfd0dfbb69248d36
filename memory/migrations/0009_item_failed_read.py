from django.db import migrations, models

# The sweep leaves an item whose read failed at its current version (read/failures.py): read again only once
# edited, which makes a new version.
UNREAD_ITEMS = """
CREATE OR REPLACE FUNCTION twin_unread_items(updated_before timestamptz, max_items integer)
RETURNS TABLE (item_id bigint, project_id bigint, end_user_id bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT i.id, e.project_id, i.end_user_id FROM memory_item i JOIN accounts_enduser e ON e.id = i.end_user_id
    WHERE (i.read_at IS NULL OR i.read_version <> i.version) AND i.failed_version <> i.version
      AND i.updated_at <= updated_before
    ORDER BY i.updated_at LIMIT max_items
$$;
"""

UNREAD_ITEMS_BEFORE = """
CREATE OR REPLACE FUNCTION twin_unread_items(updated_before timestamptz, max_items integer)
RETURNS TABLE (item_id bigint, project_id bigint, end_user_id bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT i.id, e.project_id, i.end_user_id FROM memory_item i JOIN accounts_enduser e ON e.id = i.end_user_id
    WHERE (i.read_at IS NULL OR i.read_version <> i.version) AND i.updated_at <= updated_before
    ORDER BY i.updated_at LIMIT max_items
$$;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0008_row_level_security"),
    ]

    operations = [
        migrations.AddField(
            model_name="item",
            name="failed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="item",
            name="failed_reason",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AddField(
            model_name="item",
            name="failed_version",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunSQL(UNREAD_ITEMS, UNREAD_ITEMS_BEFORE),
    ]
