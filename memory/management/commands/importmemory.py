"""importmemory: an export file (docs/export-format.md) put into one end user's memory.

    python manage.py importmemory PROJECT ACCOUNT FILE

PROJECT is the project's slug, ACCOUNT the end user (created if new), FILE an export, plain or gzipped. The
same import as POST /v1/memory/import, as a job of the project's (one import of a project at a time), run in
this process: every line checked first (bad lines are named, nothing stored), then stored IMPORT_BATCH items
to a transaction, with its progress on standard error; a failure is undone. The background read (a worker)
then rebuilds passages and the index; memory_overview's unread_items counts what it has left.
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from accounts.auth import Context, parse_account
from accounts.errors import ApiError
from accounts.models import Access, Project
from memory.management.progress import bar
from memory.models import ImportJob
from memory.portability.jobs import COMMAND, ended_with, import_job_create, import_job_run


class Command(BaseCommand):
    help = "Import an export file into one end user's memory."

    def add_arguments(self, parser):
        parser.add_argument("project", help="The project's slug")
        parser.add_argument("account", help="The end user (the X-Twin-Account value); created if new")
        parser.add_argument("file", help="An export file, plain or gzipped")

    def _progress(self, job: ImportJob) -> None:
        if job.state == ImportJob.STORING:
            self.stderr.write(bar(job.stored, job.items or 0, "stored"), ending="")
        else:
            self.stderr.write(f"\r{job.checked:,} lines checked", ending="")

    def handle(self, *args, project, account, file, **options):
        found = Project.objects.filter(slug=project).first()
        if found is None:
            raise CommandError(f"No project with slug {project!r}.")
        try:
            account = parse_account(account)
        except ApiError as refused:
            raise CommandError(refused.message) from None
        path = Path(file).resolve()
        try:
            path.open("rb").close()
        except OSError as unreadable:
            raise CommandError(f"Cannot read {file}: {unreadable.strerror}.") from None
        self.stderr.write("Checking every line...")
        try:
            job = import_job_create(
                context=Context(project=found, account=account, access=Access.WRITE), file=str(path), surface=COMMAND
            )
        except ApiError as refused:
            raise CommandError(f"Nothing was imported: {refused.message}") from None
        ended = import_job_run(found.pk, job.pk, progress=self._progress)
        self.stderr.write("")
        if ended is None or ended.state != ImportJob.DONE:
            raise CommandError(f"Nothing was imported: {ended_with(ended)['message'] if ended else 'it did not run'}")
        answer = ended_with(ended)
        statuses = ", ".join(f"{n:,} {status}" for status, n in sorted(answer["statuses"].items())) or "none"
        self.stdout.write(
            f"Imported {answer['items']:,} items into {account!r} of project {project} ({statuses}), "
            f"with {answer['versions']:,} earlier versions and {answer['facts']:,} facts; "
            f"{answer['unread_items']:,} items still to be read by the background read."
        )
