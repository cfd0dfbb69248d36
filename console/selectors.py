"""Reads for the console's Usage page: the project's recorded usage, read through memory/usage.py (the usage
tables' one home, always filtered by the project), with each credential's label and the page's shape."""

from datetime import timedelta

from django.utils import timezone

from accounts.models import ApiKey, Connection, Project
from memory.models import RecentError
from memory.usage import USAGE_TOTALS, latency_by_tool_day, recent_errors_of, usage_totals

USAGE_DAYS = (7, 30, 90)
ERRORS_SHOWN = 50


def credential_labels(*, project: Project) -> dict[str, str]:
    """How each recorded credential reads: a key's name and prefix, a connection's app and person."""
    labels = {"local": "Local server"}
    for prefix, name, revoked in ApiKey.objects.filter(project=project).values_list("prefix", "name", "revoked_at"):
        labels[prefix] = f"{name or 'Unnamed key'} ({prefix}…){' · revoked' if revoked else ''}"
    for pk, app, email in Connection.objects.filter(project=project).values_list(
        "pk", "application__name", "user__email"
    ):
        labels[f"oauth:{pk}"] = f"{app or 'App'} · {email} (OAuth)"
    return labels


def usage_of_project(*, project: Project, days: int) -> dict:
    """Per day, per tool, per credential and per MCP protocol revision: requests, errors, items added, model
    calls, calls throttled (429 over the rate limit, counted under no tool); and the totals."""
    since = timezone.now().date() - timedelta(days=days - 1)
    sums = usage_totals(project_id=project.pk, since=since)
    labels = credential_labels(project=project)
    by_day = {r["day"]: r for r in sums["by_day"]}
    daily = []
    for offset in range(days):
        day = since + timedelta(days=offset)
        daily.append(by_day.get(day, {"day": day, **{name: 0 for name in USAGE_TOTALS}}))
    by_key = sums["by_credential"]
    for row in by_key:
        row["label"] = labels.get(row["credential"], row["credential"])
    peak = max((d["requests"] for d in daily), default=0) or 1
    for d in daily:
        d["percent"] = round(100 * d["requests"] / peak)
    return {
        "since": since,
        "daily": list(reversed(daily)),
        "by_tool": sorted(sums["by_tool"], key=lambda r: -r["requests"]),
        "by_key": sorted(by_key, key=lambda r: -r["requests"]),
        "by_surface": sorted(sums["by_surface"], key=lambda r: -r["requests"]),
        # MCP calls by the protocol revision they spoke, newest revision first ("" is every call off MCP).
        "by_revision": sorted(sums["by_revision"], key=lambda r: r["revision"], reverse=True),
        "totals": sums["totals"],
        # p50 and p95 per tool per day, from the latency buckets counted with the requests.
        "latency": latency_by_tool_day(project_id=project.pk, since=since),
    }


def recent_errors(*, project: Project, limit: int = ERRORS_SHOWN) -> list[RecentError]:
    """The project's last errors, newest first, each with a readable credential label."""
    labels = credential_labels(project=project)
    errors = recent_errors_of(project_id=project.pk, limit=limit)
    for error in errors:
        error.label = labels.get(error.credential, error.credential)
    return errors
