"""The unread items' index carries what the read backlog counts (characters, version, failed_version), so
the count an add makes first reads the index alone."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0006_project_secret_policy"),
        ("memory", "0018_thread_counts"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="item",
            name="item_unread_by_end_user",
        ),
        migrations.AddIndex(
            model_name="item",
            index=models.Index(
                condition=models.Q(("read_at__isnull", True)),
                fields=["end_user", "updated_at"],
                include=("characters", "version", "failed_version"),
                name="item_unread_by_end_user",
            ),
        ),
    ]
