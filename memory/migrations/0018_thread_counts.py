"""Each thread's passages counted, with their first and last moments, so index.md and the overview read the
threads rather than every passage (memory/selectors.py Memory.recount_threads keeps them)."""

from django.db import migrations, models

# As twin_owner (BYPASSRLS): every end user's threads at once.
COUNT_THREADS = """
UPDATE memory_thread t SET passage_count = s.n, first_at = s.first_at, last_at = s.last_at
FROM (SELECT thread_id, count(*) AS n, min(at) AS first_at, max(at) AS last_at
      FROM memory_passage GROUP BY thread_id) s
WHERE t.id = s.thread_id
"""


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0006_project_secret_policy"),
        ("memory", "0017_stale_vectors"),
    ]

    operations = [
        migrations.AddField(
            model_name="thread",
            name="first_at",
            field=models.DateTimeField(null=True),
        ),
        migrations.AddField(
            model_name="thread",
            name="last_at",
            field=models.DateTimeField(null=True),
        ),
        migrations.AddField(
            model_name="thread",
            name="passage_count",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddIndex(
            model_name="thread",
            index=models.Index(fields=["end_user", "-last_at"], name="thread_newest"),
        ),
        migrations.RunSQL(COUNT_THREADS, migrations.RunSQL.noop),
    ]
