"""Rows stored before dates were bounded, made readable: an item's `at` or `expires`, or a version's
`replaced_at`, outside the dates the stack can hold (memory/limits.py: a UTC year past 9999, such as
9999-12-31T23:59-10:00, or before 1). PostgreSQL holds them; psycopg cannot read them back, so their read
failed forever and versions, correct and re-adding their id answered 500.

Each is clamped to the nearest date that can be read (DATE_LATEST or DATE_EARLIEST, within hours of what the
caller meant), which keeps the item and its text, and its read is redone: marked unread, no longer failed, so
the sweep reads it again. Its content hash is left as it was, the digest of what the caller sent. Compared in
SQL, as no such row can be loaded to look. As the migrating owner, twin_owner, which bypasses the tables'
row-level security (FORCE applies to it only without BYPASSRLS: memory/migrations/0008), so every end user's
rows are reached. Not reversed: the dates clamped away could never be read.
"""

from django.db import migrations

from memory.limits import DATE_EARLIEST, DATE_LATEST  # the one definition, as of the day the migration runs

EARLIEST, LATEST = f"'{DATE_EARLIEST.isoformat()}'::timestamptz", f"'{DATE_LATEST.isoformat()}'::timestamptz"


def outside(column: str) -> str:
    return f"({column} > {LATEST} OR {column} < {EARLIEST})"


def clamped(column: str) -> str:
    """`column` within the dates; NULL stays NULL (an item that never expires)."""
    return (
        f"{column} = CASE WHEN {column} > {LATEST} THEN {LATEST} WHEN {column} < {EARLIEST} THEN {EARLIEST} "
        f"ELSE {column} END"
    )


CLAMP_ITEMS = f"""
UPDATE memory_item SET {clamped("at")}, {clamped("expires")},
    read_version = 0, read_at = NULL, failed_version = 0, failed_reason = '', failed_at = NULL
WHERE {outside("at")} OR {outside("expires")};
"""
CLAMP_VERSIONS = f"UPDATE memory_itemversion SET {clamped('replaced_at')} WHERE {outside('replaced_at')};"


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0014_duplicates_secrets_forget"),
    ]

    operations = [
        migrations.RunSQL(CLAMP_ITEMS, migrations.RunSQL.noop),
        migrations.RunSQL(CLAMP_VERSIONS, migrations.RunSQL.noop),
    ]
