"""No vector index over everyone's passages. A memory under settings.OWN_INDEX_PASSAGES is searched by reading
all of it through the end user's index, exactly (the planner chose that for nearly every memory anyway), and a
bigger one by its own HNSW index (memory/read/own_indexes.py). The shared index was what every passage's
write paid most for in PostgreSQL: taking a row into a graph of the whole table costs more the bigger the
table grows. Dropped concurrently: writes go on meanwhile."""

from django.contrib.postgres.operations import RemoveIndexConcurrently
from django.db import migrations


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("memory", "0021_passage_end_user_statistics"),
    ]

    operations = [RemoveIndexConcurrently(model_name="passage", name="passage_embedding")]
