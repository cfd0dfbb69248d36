from django.core.management.base import BaseCommand, CommandError

from accounts.models import Access, Project
from accounts.services import api_key_create


class Command(BaseCommand):
    help = "Mint an API key for a project. The key is printed alone on the last line; it is not shown again."

    def add_arguments(self, parser):
        parser.add_argument("project", help="The project's slug")
        parser.add_argument("--access", required=True, choices=Access.values)
        parser.add_argument("--name", default="")

    def handle(self, *args, project, access, name, **options):
        found = Project.objects.filter(slug=project).first()
        if found is None:
            raise CommandError(f"No project with slug {project!r}.")
        key, raw = api_key_create(project=found, access=access, name=name)
        self.stdout.write(f"Created a {key.get_access_display().lower()} key {key.prefix}… for {found.slug}:")
        self.stdout.write(raw)
