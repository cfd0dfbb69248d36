"""The Celery app, started as `TWIN_PROCESS=worker celery -A twin worker`.

Every process imports it (twin/__init__.py), so it names no process kind itself: whoever starts a worker does.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")

app = Celery("twin")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The import's task lives with the import (memory/portability/jobs.py), on a queue of its own.
app.autodiscover_tasks(["memory.portability"], related_name="jobs")
# Each (re)connection to the broker sweeps unread items (memory.tasks.SweepOnConnect); named, not imported,
# because the tasks need Django, which is set up after this module.
app.steps["consumer"].add("memory.tasks.SweepOnConnect")
