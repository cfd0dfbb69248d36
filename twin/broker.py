"""Celery's Redis transport (kombu's), with one repair: a channel whose connection was closed says so as the
connection error it is.

When the broker is lost, Celery's consumer takes the connection apart (`collect()`, then `close()`) and
connects again. A channel of the old connection may still be asked to act: closing gives back the messages it
had not acknowledged (our reads are acknowledged late, so there usually is one), and a read that finishes
afterwards acknowledges its message. Both reach the transport after its client was set to None, and kombu
raises AttributeError, which Celery treats as unrecoverable: the worker exits and nothing is read until it is
started again. Raised as a connection error instead, each is handled as kombu means (the acknowledgement is
logged as lost, the close carries on) and the consumer reconnects; the message comes back after the
visibility timeout, and the sweep on reconnect (memory.tasks.SweepOnConnect) queues any unread item at once.
Chosen by CELERY_BROKER_TRANSPORT in twin/settings.py.
"""

import redis
from kombu.transport import redis as kombu_redis


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous=False):
        if self.connection.client is None:
            raise redis.exceptions.ConnectionError("The broker connection was closed (the broker was lost).")
        return super()._connparams(asynchronous=asynchronous)  # type: ignore[misc]  # kombu's stubs omit it


class Transport(kombu_redis.Transport):
    Channel = Channel
