"""Export and import (memory/portability/): an item's facts may come with an import, and keep their times.

- Item.facts_imported_version: the version whose facts an import brought; its read extracts none.
- Fact.source_seq: the source passage's place among its item's passages, which an export names (passage ids
  are rebuilt on import). Filled here for the facts already recorded, from their source passage.
- Fact.recorded_at and ItemVersion.replaced_at default to now rather than always being now, so an import
  keeps the times it was given. No change in the database: Django sets either.
"""

import django.utils.timezone
from django.db import migrations, models

# Run as twin_owner (BYPASSRLS), so every end user's facts are filled. A passage id is th_…/p_NNNN, four
# digits at least (memory/paths.py passage_id).
SOURCE_SEQ = """
UPDATE memory_fact f SET source_seq = placed.n
FROM (
    SELECT p.item_id,
        t.tid || '/p_' || CASE WHEN p.seq < 10000 THEN lpad(p.seq::text, 4, '0') ELSE p.seq::text END AS passage_id,
        row_number() OVER (PARTITION BY p.item_id ORDER BY p.thread_id, p.seq) AS n
    FROM memory_passage p JOIN memory_thread t ON t.id = p.thread_id
) placed
WHERE f.item_id = placed.item_id AND f.source_passage = placed.passage_id;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0010_usage_protocol_revision"),
    ]

    operations = [
        migrations.AddField(
            model_name="item",
            name="facts_imported_version",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="fact",
            name="source_seq",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="fact",
            name="recorded_at",
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.AlterField(
            model_name="itemversion",
            name="replaced_at",
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.RunSQL(SOURCE_SEQ, migrations.RunSQL.noop),
    ]
