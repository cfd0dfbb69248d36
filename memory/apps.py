from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"

    def ready(self):
        # Connects the receiver that counts rate-limited calls (accounts.ratelimit.throttled) for the Usage page.
        from twin import metrics

        from . import usage  # noqa: F401 - imported for its receiver, once the models are loaded
        from .observe import BacklogCollector

        metrics.add_scrape_collector(BacklogCollector())  # the read's backlog, read at each scrape of /metrics
