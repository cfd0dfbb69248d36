"""Duplicates caught on write (memory/duplicates.py): each item's content hash, whether its id is the
caller's, the unique index that decides between two adds of one text at once, and the index that finds a
duplicate's original; the Usage counts of duplicates and secrets caught; and the item whose correction retracted
a fact, so forgetting it lets the value stand again. No new table, so no new policy: the columns fall under
their tables' policies."""

import django.db.models.deletion
from django.db import migrations, models

from memory.duplicates import content_hash  # the one definition, as of the day the migration runs

BATCH = 2_000  # items hashed per update while filling the column for items stored before it


def hash_stored_items(apps, schema_editor):
    """Every item already stored gets its content hash, so a new add can be caught as its duplicate. As the
    migrating owner (BYPASSRLS), which sees every end user's items. Their ids stay the callers' (the default):
    which ids memory generated was never kept, so none joins the unique index."""
    item_model = apps.get_model("memory", "Item")
    items = item_model.objects.using(schema_editor.connection.alias)
    batch = []
    for item in items.only("kind", "author", "session", "at", "text").iterator(chunk_size=BATCH):
        item.content_hash = content_hash(
            {"kind": item.kind, "author": item.author, "session": item.session, "at": item.at, "text": item.text}
        )
        batch.append(item)
        if len(batch) == BATCH:
            items.bulk_update(batch, ["content_hash"])
            batch = []
    items.bulk_update(batch, ["content_hash"])


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0013_read_backlog"),
    ]

    operations = [
        migrations.AddField(
            model_name="item",
            name="content_hash",
            field=models.CharField(blank=True, max_length=64, null=True),
        ),
        migrations.AddField(
            model_name="item",
            name="caller_id",
            field=models.BooleanField(default=True),
        ),
        migrations.AddIndex(
            model_name="item",
            index=models.Index(fields=["end_user", "content_hash"], name="item_content"),
        ),
        migrations.AddConstraint(
            model_name="item",
            constraint=models.UniqueConstraint(
                condition=models.Q(("caller_id", False)),
                fields=("end_user", "content_hash"),
                name="one_item_per_content",
            ),
        ),
        migrations.AddField(
            model_name="usageday",
            name="duplicates_caught",
            field=models.IntegerField(default=0),
        ),
        migrations.AddField(
            model_name="usageday",
            name="secrets_caught",
            field=models.IntegerField(default=0),
        ),
        migrations.AddField(
            model_name="fact",
            name="retracted_by",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to="memory.item"
            ),
        ),
        migrations.RunPython(hash_stored_items, migrations.RunPython.noop),
    ]
