"""The planner keeps the size of up to 500 memories rather than 100. Search takes a big memory's own HNSW
index only when the planner expects the memory to be big, and a memory outside the statistics' list of most
common end users is expected to hold the average of the rest: past the 100th big memory, search would read
a big memory whole. The price is a bigger ANALYZE sample, so a slower ANALYZE (bench/README.md "Search
latency"). 500 covers the memories the own indexes are made for: each is two more indexes for the planner to
weigh on every search, so far fewer than that many memories of a table should have them."""

from django.db import migrations

END_USERS_KEPT = 500


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0020_backlog_end_users_once"),
    ]

    operations = [
        migrations.RunSQL(
            f"ALTER TABLE memory_passage ALTER COLUMN end_user_id SET STATISTICS {END_USERS_KEPT}",
            "ALTER TABLE memory_passage ALTER COLUMN end_user_id SET STATISTICS -1",
        )
    ]
