"""checkconnections: refuse a configuration that could open more database connections than the server
takes (`make run` runs it before starting anything).

    python manage.py checkconnections

Adds up what every process of this machine's configuration can open (twin/capacity.py: web workers x pool
max, worker children, beat, import workers, commands) and compares it with the server's max_connections less its
reserved connections and a margin. Exits 1, saying what to change, when it does not fit: otherwise the
server would answer "too many clients" under load. Web and workers on other machines against the same
database add their own sums (README "Sizing").
"""

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from twin import capacity

_LIMITS = """
SELECT current_setting('max_connections')::int AS max_connections,
       current_setting('superuser_reserved_connections')::int
       + coalesce(current_setting('reserved_connections', true)::int, 0) AS reserved
"""


class Command(BaseCommand):
    help = "Check that the configured web workers, pools and Celery children fit the database's max_connections."
    requires_system_checks = []

    def handle(self, *args, **options):
        with connection.cursor() as cursor:
            cursor.execute(_LIMITS)
            names = [column.name for column in cursor.description]
            limits = dict(zip(names, cursor.fetchone(), strict=True))
        budget = capacity.connection_budget()
        room = limits["max_connections"] - limits["reserved"] - capacity.CONNECTION_MARGIN
        for line in budget.lines():
            self.stdout.write(f"  {line}")
        summary = (
            f"{budget.total} connections at most; the server takes {limits['max_connections']} "
            f"({limits['reserved']} reserved, {capacity.CONNECTION_MARGIN} kept free): room for {room}."
        )
        if budget.total > room:
            raise CommandError(
                f"{summary} Lower WEB_WORKERS, DB_POOL_MAX, WORKER_CONCURRENCY or IMPORT_WORKERS, or raise the "
                'server\'s max_connections (README "Sizing").'
            )
        self.stdout.write(f"Database connections: {summary}")
