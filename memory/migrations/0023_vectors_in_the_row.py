"""A passage's two vectors stay in its row. PostgreSQL moves a row's biggest values out of line once the row
passes about 2 kB, and a passage with both its vectors in half precision (1.5 kB) and its text and full text
is around that: most passages would have their vector in TOAST, so search would read each candidate's vector
from a second relation, slowing a memory read whole, and every such write would store it there. Rows now move
values out only past 4 kB: a long passage's text goes first, being the biggest. Rows already stored keep their
place until they are written again."""

from django.db import migrations

ROW_TARGET_BYTES = 4080  # half a page


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0022_no_shared_vector_index"),
    ]

    operations = [
        migrations.RunSQL(
            f"ALTER TABLE memory_passage SET (toast_tuple_target = {ROW_TARGET_BYTES})",
            "ALTER TABLE memory_passage RESET (toast_tuple_target)",
        )
    ]
