"""migrate, as the owner: Django's own command with --database defaulting to the OWNER alias (twin_owner,
which owns every table), so `manage.py migrate` needs no flag; twin_app, the default alias, may not create
or alter a table."""

from django.core.management.commands import migrate

from twin.database import OWNER


class Command(migrate.Command):
    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.set_defaults(database=OWNER)
