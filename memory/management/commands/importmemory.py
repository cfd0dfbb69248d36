"""importmemory: an export file (docs/export-format.md) put into one end user's memory.

    python manage.py importmemory PROJECT ACCOUNT FILE

PROJECT is the project's slug, ACCOUNT the end user (created if new), FILE an export, plain or gzipped. The
same import as POST /v1/memory/import: every line checked first (a bad line is named, nothing stored), then
stored IMPORT_BATCH items to a transaction, with a progress bar on standard error. The background read
(a worker) then rebuilds passages and the index; memory_overview's unread_items counts what it has left.
"""

from django.core.management.base import BaseCommand, CommandError

from accounts.auth import parse_account
from accounts.errors import ApiError
from accounts.models import Project
from accounts.services import end_user_get_or_create
from memory.management.progress import bar
from memory.portability import imports
from memory.selectors import Memory


class Command(BaseCommand):
    help = "Import an export file into one end user's memory."

    def add_arguments(self, parser):
        parser.add_argument("project", help="The project's slug")
        parser.add_argument("account", help="The end user (the X-Twin-Account value); created if new")
        parser.add_argument("file", help="An export file, plain or gzipped")

    def _progress(self, done: int, total: int) -> None:
        self.stderr.write(bar(done, total, "stored"), ending="")

    def handle(self, *args, project, account, file, **options):
        found = Project.objects.filter(slug=project).first()
        if found is None:
            raise CommandError(f"No project with slug {project!r}.")
        try:
            account = parse_account(account)
        except ApiError as refused:
            raise CommandError(refused.message) from None
        self.stderr.write("Checking every line...")
        try:
            with open(file, "rb") as opened:
                size = imports.check_file(opened, project_id=found.pk)
                memory = Memory(end_user_get_or_create(project=found, external_id=account))
                answer = imports.store_file(memory=memory, file=opened, size=size, progress=self._progress)
        except ApiError as refused:
            raise CommandError(f"Nothing was imported: {refused.message}.") from None
        except OSError as unreadable:
            raise CommandError(f"Cannot read {file}: {unreadable.strerror}.") from None
        statuses = ", ".join(f"{n:,} {status}" for status, n in sorted(answer["statuses"].items())) or "none"
        self.stderr.write("")
        self.stdout.write(
            f"Imported {answer['items']:,} items into {account!r} of project {project} ({statuses}), "
            f"with {answer['versions']:,} earlier versions and {answer['facts']:,} facts; "
            f"{answer['unread_items']:,} items still to be read by the background read."
        )
