"""The Celery app, started as `TWIN_PROCESS=worker celery -A twin worker`.

Every process imports it (twin/__init__.py), so it names no process kind itself: whoever starts a worker does.
"""

import os

from celery import Celery
from celery.worker.consumer import Consumer

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")

app = Celery("twin")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.worker_consumer = "twin.celery:SurvivingConsumer"
app.autodiscover_tasks()
# Each (re)connection to the broker sweeps unread items (memory.tasks.SweepOnConnect); named, not imported,
# because the tasks need Django, which is set up after this module.
app.steps["consumer"].add("memory.tasks.SweepOnConnect")


class SurvivingConsumer(Consumer):
    """Celery's consumer, which outlives a broker lost while a message is unacknowledged (our reads are acked
    late, so one usually is). Celery 5.7 closes the lost connection after `collect()` has taken its transport
    apart; closing then tries to give the unacknowledged message back through a transport with no client and
    raises AttributeError, which Celery takes as unrecoverable and the worker exits. By then the consumer has
    already let go of the connection, so carrying on to the reconnect is safe: the message comes back after the
    visibility timeout, and the sweep on reconnect (SweepOnConnect) queues any unread item at once."""

    def on_connection_error_after_connected(self, exc):
        try:
            super().on_connection_error_after_connected(exc)
        except AttributeError:
            self.connection = None
