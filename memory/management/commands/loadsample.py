"""loadsample: add the connector sample (memory/sample/team.jsonl) to one end user's memory.

    python manage.py loadsample --account END_USER [--project SLUG] [--file PATH]

Goes through memory_add's own path (the registry's `call`, with a read-and-write Context), so the items are
stored, read and indexed exactly as an API caller's would be. When no worker reads them within a few
seconds (a demo machine with no worker running), the read is run here, in-process. Loading again is
harmless: the items keep their ids, so an unchanged item is left as it is.
"""

import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from accounts.auth import Context
from accounts.models import Access, Project
from memory import tools
from memory.dispatch import call
from memory.limits import ITEMS_MAX
from memory.read import pipeline
from memory.selectors import Memory, memory_to_write

SAMPLE = Path(__file__).resolve().parents[2] / "sample" / "team.jsonl"
WORKER_GRACE = 5  # seconds to let a running worker read before reading in-process
POLL_SECONDS = 0.2  # how often to look whether the worker has read them: a short wait, a few cheap queries
PROJECTS_NAMED = 10  # projects named when one must be chosen: enough to find it, short enough for one line


class Command(BaseCommand):
    help = "Load the connector sample (a payments team's Slack, GitHub and PagerDuty activity) into an end user."

    def add_arguments(self, parser):
        parser.add_argument("--account", required=True, help="The end user (the X-Twin-Account value)")
        parser.add_argument("--project", default="", help="The project's slug; default the only project")
        parser.add_argument("--file", default=str(SAMPLE), help="A JSONL file of memory_add items")

    def _project(self, slug: str) -> Project:
        if slug:
            found = Project.objects.filter(slug=slug).first()
            if found is None:
                raise CommandError(f"No project with slug {slug!r}.")
            return found
        projects = list(Project.objects.order_by("slug")[: PROJECTS_NAMED + 1])  # one more: "and others"
        if len(projects) != 1:
            names = ", ".join(p.slug for p in projects[:PROJECTS_NAMED]) or "none yet"
            raise CommandError(f"Name the project with --project (the projects: {names}).")
        return projects[0]

    @staticmethod
    def _unread(memory: Memory) -> list[int]:
        with memory.scoped():
            return list(memory.unread_items().values_list("pk", flat=True))

    def handle(self, *args, account, project, file, **options):
        items = [json.loads(line) for line in Path(file).read_text().splitlines() if line.strip()]
        context = Context(project=self._project(project), account=account, access=Access.WRITE)
        add = tools.BY_NAME["memory_add"]
        added = 0
        for start in range(0, len(items), ITEMS_MAX):
            outcome = call(add, context, {"items": items[start : start + ITEMS_MAX], "wait": False})
            if outcome.error:
                raise CommandError(outcome.message)
            added += sum(r["status"] != "unchanged" for r in outcome.body["items"])
        memory = memory_to_write(context, create=False)
        deadline = time.monotonic() + WORKER_GRACE
        while (unread := self._unread(memory)) and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
        if unread:
            read = pipeline.read_items(memory, unread)
            self.stderr.write(f"No worker read them in {WORKER_GRACE} s; read {read} items in-process.")
        self.stdout.write(
            f"Loaded {len(items)} events ({added} new or changed) into {account!r} of project {context.project.slug}."
        )
