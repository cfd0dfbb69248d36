"""The kinds of process, named once: whoever starts a process names its kind in TWIN_PROCESS (when it is
unset, manage.py names it from its command and gunicorn.conf.py as web), and twin/settings.py reads it once
into settings.PROCESS_KIND; what differs by kind is decided there."""

ENVIRONMENT = "TWIN_PROCESS"  # the variable that names a process's kind
WEB = "web"  # the web server (gunicorn): a bounded database pool, statement timeouts, a broker that fails fast
WORKER = "worker"  # a Celery worker: the background read and the beat
COMMAND = "command"  # a management command
STDIO = "stdio"  # the local MCP server over stdio: the read runs in-process, no worker needed
KINDS = (WEB, WORKER, COMMAND, STDIO)
DEFAULT = WEB  # what a process is when nobody says
STDIO_COMMAND = "mcp"  # the management command that is the stdio server


def of_command(argv: list[str]) -> str:
    """The kind of a manage.py process, named by its command: the stdio server for `mcp`, else a command."""
    return STDIO if argv[1:2] == [STDIO_COMMAND] else COMMAND
