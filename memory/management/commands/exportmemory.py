"""exportmemory: one end user's memory as an export file (docs/export-format.md).

    python manage.py exportmemory PROJECT ACCOUNT [--out FILE]

PROJECT is the project's slug, ACCOUNT the end user (the X-Twin-Account value). Writes to FILE (gzipped when
its name ends in .gz) or to standard output, with a progress bar on standard error (the items counted by
the first line, as importmemory draws it). The same
export as POST /v1/memory/export: one snapshot, in bounded memory.
"""

import gzip
import json
import sys
from contextlib import closing, nullcontext

from django.core.management.base import BaseCommand, CommandError

from accounts.models import Project
from accounts.selectors import end_user_of_project
from memory.management.progress import bar
from memory.portability.export import export_lines
from memory.selectors import Memory

GZIP_SUFFIX = ".gz"


def memory_of(slug: str, account: str) -> Memory:
    """The memory of end user `account` of project `slug`, or CommandError naming which is missing."""
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise CommandError(f"No project with slug {slug!r}.")
    end_user = end_user_of_project(project=project, external_id=account)
    if end_user is None:
        raise CommandError(f"Project {slug} has no end user {account!r}.")
    return Memory(end_user)


class Command(BaseCommand):
    help = "Export one end user's memory as JSON Lines (docs/export-format.md)."

    def add_arguments(self, parser):
        parser.add_argument("project", help="The project's slug")
        parser.add_argument("account", help="The end user (the X-Twin-Account value)")
        parser.add_argument(
            "--out", default="", help="The file to write (gzipped if it ends in .gz); default standard output"
        )

    def handle(self, *args, project, account, out, **options):
        memory = memory_of(project, account)
        opener = gzip.open if out.endswith(GZIP_SUFFIX) else open
        target = opener(out, "wb") if out else nullcontext(sys.stdout.buffer)
        with target as file, closing(export_lines(memory)) as lines:
            header = next(lines)  # the first line counts the items that follow: the bar's total
            file.write(header)
            total, written = json.loads(header)["items"], 0
            self.stderr.write(bar(written, total, "exported"), ending="")
            for chunk in lines:
                file.write(chunk)
                written += chunk.count(b"\n")
                self.stderr.write(bar(written, total, "exported"), ending="")
        self.stderr.write("")
        self.stderr.write(
            f"Exported {written:,} items of {account!r} in project {project}{' to ' + out if out else ''}."
        )
