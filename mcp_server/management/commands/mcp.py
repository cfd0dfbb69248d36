from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from accounts.auth import Context, parse_account
from accounts.errors import ApiError
from accounts.models import Access, Project
from mcp_server import protocol
from mcp_server.stdio import serve
from memory.tools import stdio_tools
from twin.process import ENVIRONMENT, STDIO


class Command(BaseCommand):
    help = (
        "The local MCP server over stdio for one end user: the eight read tools, the four tools for "
        "connector data, and memory_add with --writes."
    )

    def add_arguments(self, parser):
        parser.add_argument("--account", required=True, help="The end user whose memory the tools read")
        parser.add_argument("--project", help="The project's slug; may be left out when there is one project")
        parser.add_argument("--writes", action="store_true", help="Also list memory_add")

    def handle(self, *args, account, project, writes, **options):
        # The kind is fixed before settings load (manage.py names it from the command), so they make the read
        # run in-process, no worker needed; a kind set by hand to anything else would leave saves unread.
        if settings.PROCESS_KIND != STDIO:
            raise CommandError(
                f"{ENVIRONMENT} is {settings.PROCESS_KIND!r}, and the stdio server runs only as {STDIO!r}: "
                f"unset it (manage.py mcp names the kind itself) or set {ENVIRONMENT}={STDIO}."
            )
        try:
            account = parse_account(account)
        except ApiError as error:
            raise CommandError(error.message) from None
        if project:
            found = Project.objects.filter(slug=project).first()
            if found is None:
                raise CommandError(f"No project with slug {project!r}.")
        else:
            projects = list(Project.objects.all()[:2])
            if len(projects) != 1:
                raise CommandError("Name the project with --project SLUG (there is not exactly one).")
            found = projects[0]
        context = Context(project=found, account=account, access=Access.WRITE if writes else Access.READ)
        serve(protocol.Session(context=context, tools=stdio_tools(context), surface="stdio"))
