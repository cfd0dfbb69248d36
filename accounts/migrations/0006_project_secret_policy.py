from django.db import migrations, models


class Migration(migrations.Migration):
    """A project chooses what memory does with an item holding a secret: refuse it (the default) or store it
    redacted (memory/secrets/gate.py)."""

    dependencies = [
        ("accounts", "0005_project_rate_limits"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="secret_policy",
            field=models.CharField(
                choices=[("refuse", "Refuse the item"), ("redact", "Store it with each secret redacted")],
                default="refuse",
                max_length=8,
            ),
        ),
    ]
