from django.db import migrations, models


class Migration(migrations.Migration):
    """Calls refused over a credential's rate limit, per day, for the Usage page (memory/usage.py). A
    database default, so a process of the previous release writing usage meanwhile still can."""

    dependencies = [
        ("memory", "0011_portable_memory"),
    ]

    operations = [
        migrations.AddField(
            model_name="usageday",
            name="throttled",
            field=models.IntegerField(db_default=0, default=0),
        ),
    ]
