"""Usage counted by MCP protocol revision too: a call over /v1/mcp or the stdio server records the revision it
spoke (2026-07-28 or one of the wire document's four); "" off MCP. The one-row-per-key constraint takes the
new column, since the usage upsert names exactly these columns. The table's row-level security policy (0008)
is on the project and is unchanged."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0009_item_failed_read"),
    ]

    operations = [
        migrations.AddField(
            model_name="usageday",
            name="revision",
            field=models.CharField(blank=True, default="", max_length=16),
        ),
        migrations.RemoveConstraint(
            model_name="usageday",
            name="one_usage_row",
        ),
        migrations.AddConstraint(
            model_name="usageday",
            constraint=models.UniqueConstraint(
                fields=("project", "day", "tool", "credential", "surface", "revision"), name="one_usage_row"
            ),
        ),
    ]
