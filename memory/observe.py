"""What a tool call says about itself to the operator: the fields every log line of the call carries (the
project's slug, the credential's prefix, the surface and the tool), and its count and latency in the metrics.
Called by dispatch.call, the one path of every call, beside where usage is counted; never an end user's id,
an argument or any text."""

import time

from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily

from twin import metrics
from twin.logs import bind

from . import usage
from .outcome import Outcome
from .project_selectors import read_backlogs

BACKLOG_PROJECTS = 10  # projects named in the backlog's metrics, the largest backlogs; the rest are summed


def call_started(counted: usage.Call) -> None:
    """Bind the call's fields to the log context of the request (or stdio line) it serves."""
    bind(
        project=counted.context.project.slug,
        credential=usage.credential(counted.context),
        surface=counted.surface,
        tool=counted.tool,
    )


def call_ended(counted: usage.Call, outcome: Outcome) -> None:
    """Count the call by its status (ok, or the error's stable code) with its latency."""
    metrics.tool_call_observed(
        surface=counted.surface,
        tool=counted.tool,
        status=outcome.error or "ok",
        revision=counted.revision,
        seconds=time.perf_counter() - counted.started,
    )


class BacklogCollector:
    """The read's backlog at each scrape: items, characters and the oldest unread item's age, for each of the
    BACKLOG_PROJECTS projects furthest behind (labelled by project id) and summed for the rest ("others"), so
    the labels stay bounded however many projects there are."""

    def collect(self):
        names = ("items", "characters", "oldest_seconds")
        families = {
            name: GaugeMetricFamily(f"twin_read_backlog_{name}", f"The read's backlog: {name}.", labels=["project"])
            for name in names
        }
        rows, now = read_backlogs(), timezone.now()
        others = {"items": 0, "characters": 0, "oldest_seconds": 0.0}
        for rank, row in enumerate(rows):
            values = {
                "items": row["items"],
                "characters": row["characters"],
                "oldest_seconds": (now - row["oldest"]).total_seconds(),
            }
            if rank < BACKLOG_PROJECTS:
                for name in names:
                    families[name].add_metric([str(row["project_id"])], values[name])
            else:
                others = {
                    "items": others["items"] + values["items"],
                    "characters": others["characters"] + values["characters"],
                    "oldest_seconds": max(others["oldest_seconds"], values["oldest_seconds"]),
                }
        for name in names:
            families[name].add_metric(["others"], others[name])
        return list(families.values())
