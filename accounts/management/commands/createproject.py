from django.core.management.base import BaseCommand

from accounts.services import project_get_or_create


class Command(BaseCommand):
    help = "Create a project (and its owner user if new), or leave an existing one as it is. Prints its slug."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--owner", required=True, help="The owner's email")

    def handle(self, *args, name, owner, **options):
        project, created = project_get_or_create(name=name, owner_email=owner)
        if created:
            self.stderr.write(f"Created project {project.name!r} owned by {owner}.")
        else:
            self.stderr.write(f"Project {project.name!r} already exists; left as it is.")
        self.stdout.write(project.slug)
