"""The kinds of process, named once: whoever starts a process names its kind in TWIN_PROCESS, and
twin/settings.py reads it once into settings.PROCESS_KIND; what differs by kind is decided there."""

ENVIRONMENT = "TWIN_PROCESS"  # the variable that names a process's kind
WEB = "web"  # the web server (gunicorn): a bounded database pool, statement timeouts, a broker that fails fast
WORKER = "worker"  # a Celery worker: the background read and the beat
COMMAND = "command"  # a management command
STDIO = "stdio"  # the local MCP server over stdio: the read runs in-process, no worker needed
KINDS = (WEB, WORKER, COMMAND, STDIO)
DEFAULT = WEB  # what a process is when nobody says
