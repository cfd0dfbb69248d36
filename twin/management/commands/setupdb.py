"""setupdb: the superuser's steps, once (twin/database_setup.py); `make setup` runs it before `migrate`.

python manage.py setupdb          # the embedded server: done here, as its superuser
python manage.py setupdb --sql    # the SQL an admin runs on an external server (README)
"""

import os

from django.conf import settings
from django.core.management.base import BaseCommand

from twin import database_setup
from twin.database import APP_ROLE, DEFAULT, OWNER_ROLE


class Command(BaseCommand):
    help = "Create the two database roles and the database, and prepare it (superuser steps, run once)."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--sql", action="store_true", help="Print the SQL for an external server's admin")

    def handle(self, *args, sql, **options):
        database = settings.DATABASES[DEFAULT]["NAME"]
        if sql:
            self.stdout.write(database_setup.script(database), ending="")
            return
        if os.environ.get("DATABASE_URL"):
            self.stdout.write(
                "DATABASE_URL is set: an admin prepares that server once with the SQL of "
                '`manage.py setupdb --sql` (README, "An external PostgreSQL").'
            )
            return
        done = database_setup.set_up_embedded(settings.VAR_DIR, database)
        if options["verbosity"] > 1:
            for statement in done:
                self.stdout.write(statement)
        self.stdout.write(f"Database {database} ready: owned by {OWNER_ROLE}, served as {APP_ROLE}")
