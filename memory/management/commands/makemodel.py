"""makemodel: make the embedding model's int8 file from the installed package's (memory/model/int8_file.py), once,
before any process needs it (`make setup` runs it), so that processes starting together do not each make it.

    python manage.py makemodel
"""

from django.conf import settings
from django.core.management.base import BaseCommand

from memory.model import int8_file as model_file


class Command(BaseCommand):
    help = "Make the embedding model's int8 file in var/models, if it is not there yet."
    requires_system_checks = []

    def handle(self, *args, **options):
        self.stdout.write(f"Model file ready: {model_file.path(settings.VAR_DIR / 'models')}")
