"""Vectors written through memory/model/half_text.py (the same halfvec columns: no change in the database)."""

from django.db import migrations

import memory.model.half_text


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0015_readable_dates"),
    ]

    operations = [
        migrations.AlterField(
            model_name="passage",
            name="context_embedding",
            field=memory.model.half_text.HalfVectors(dimensions=384, null=True),
        ),
        migrations.AlterField(
            model_name="passage",
            name="embedding",
            field=memory.model.half_text.HalfVectors(dimensions=384, null=True),
        ),
        migrations.AlterField(
            model_name="passagesentence",
            name="embedding",
            field=memory.model.half_text.HalfVectors(dimensions=384),
        ),
    ]
