import django.db.models.functions.text
from django.db import migrations, models

# The size of a project's read backlog, for the cap on queued read work (memory/fairness.py): counts only,
# across the project's end users, which row-level security would hide from twin_app outside one scope.
READ_BACKLOG = """
CREATE FUNCTION twin_read_backlog(of_project bigint)
RETURNS TABLE (items bigint, characters bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT count(*), coalesce(sum(i.characters), 0)::bigint FROM memory_item i
    WHERE i.end_user_id IN (SELECT e.id FROM accounts_enduser e WHERE e.project_id = of_project)
      AND i.read_at IS NULL AND i.failed_version <> i.version
$$;
COMMENT ON FUNCTION twin_read_backlog(bigint) IS
    'A project''s read backlog: its unread items and their characters (memory.fairness).';
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0012_usage_throttled"),
    ]

    operations = [
        migrations.AddField(
            model_name="item",
            name="characters",
            field=models.GeneratedField(
                db_persist=True,
                expression=django.db.models.functions.text.Length("text"),
                output_field=models.IntegerField(),
            ),
        ),
        migrations.AddIndex(
            model_name="item",
            index=models.Index(
                condition=models.Q(("read_at__isnull", True)),
                fields=["end_user", "updated_at"],
                name="item_unread_by_end_user",
            ),
        ),
        migrations.RunSQL(READ_BACKLOG, "DROP FUNCTION twin_read_backlog(bigint);"),
    ]
