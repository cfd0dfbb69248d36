"""Counting what callers do, per project and day (tool, credential, surface, and the MCP protocol revision a call
spoke), and keeping their last errors: what the console's Usage page shows. Recorded by dispatch.call, the one
path every surface takes, once per call: an answered read inside its own transaction (record_read), any other
call after it (record). Calls the rate limiter refused before any tool are counted apart, as throttled
(accounts.ratelimit.throttled).

The usage tables' one home: every write and read of UsageDay and RecentError is here (the console's Usage
page reads through usage_totals and recent_errors_of), each in the project's scope (their policy is on the
project alone)."""

import contextlib
import contextvars
import logging
import re
import time
from bisect import bisect_left
from dataclasses import dataclass, field

from django.db import DatabaseError, connection, transaction
from django.db.models import QuerySet, Sum
from django.dispatch import receiver
from django.utils import timezone

from accounts.auth import Context
from accounts.ratelimit import throttled
from memory.routes.answers import ADDED, DUPLICATE, REFUSED

from .models import RecentError, UsageDay
from .selectors import scoped

RECENT_ERRORS = 100  # errors a project keeps (about): the Usage page shows the newest of them
MESSAGE_KEPT_MAX = 2_000  # characters of an error's message kept: enough to read it, bounded in the table
TRIM_EVERY = 20  # one error in this many trims the project's list to RECENT_ERRORS: a delete now and then
# What the usage rows count, summed on the Usage page.
USAGE_TOTALS = ("requests", "errors", "items_added", "model_calls", "throttled", "duplicates_caught", "secrets_caught")
log = logging.getLogger(__name__)
# The upper bounds of the latency buckets counted per day and tool (UsageDay.latency), in milliseconds; one
# more bucket holds the calls slower than the last.
LATENCY_BUCKETS_MS = (5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000)


@dataclass
class Call:
    """One call as the Usage page counts it: who made it, of which tool, on which surface (http, mcp, stdio,
    console), speaking which MCP protocol revision ("" off MCP), and the model calls it made."""

    context: Context
    tool: str
    surface: str
    revision: str = ""
    model_calls: int = 0
    started: float = field(default_factory=time.perf_counter)  # when dispatch took the call


_current: contextvars.ContextVar[Call | None] = contextvars.ContextVar("usage_call", default=None)


@contextlib.contextmanager
def counting(call: Call):
    """Count the model calls made inside on `call` (llm.chat reports each one, through model_call): the one
    thing a service deep below cannot be handed as a parameter."""
    token = _current.set(call)
    try:
        yield call
    finally:
        _current.reset(token)


def model_call() -> None:
    call = _current.get()
    if call is not None:
        call.model_calls += 1


def credential(context: Context) -> str:
    """How the caller is known on the Usage page: a key's prefix, an OAuth connection, or the local server."""
    if context.api_key is not None:
        return context.api_key.prefix
    connection_id = getattr(getattr(context, "connection", None), "pk", None)
    return f"oauth:{connection_id}" if connection_id else "local"


_COLUMNS = (
    "(project_id, day, tool, credential, surface, revision, requests, errors, items_added, model_calls, "
    "throttled, duplicates_caught, secrets_caught, latency)"
)
_VALUES = (
    "%(project)s, %(day)s, %(tool)s, %(credential)s, %(surface)s, %(revision)s, %(requests)s, %(errors)s, "
    "%(items)s, %(models)s, %(throttled)s, %(duplicates)s, %(secrets)s, %(latency)s::integer[]"
)
_ADD = """
ON CONFLICT (project_id, day, tool, credential, surface, revision) DO UPDATE SET
    requests = memory_usageday.requests + EXCLUDED.requests, errors = memory_usageday.errors + EXCLUDED.errors,
    items_added = memory_usageday.items_added + EXCLUDED.items_added,
    model_calls = memory_usageday.model_calls + EXCLUDED.model_calls,
    throttled = memory_usageday.throttled + EXCLUDED.throttled,
    duplicates_caught = memory_usageday.duplicates_caught + EXCLUDED.duplicates_caught,
    secrets_caught = memory_usageday.secrets_caught + EXCLUDED.secrets_caught,
    latency = ARRAY(
        SELECT coalesce(kept, 0) + coalesce(added, 0)
        FROM unnest(memory_usageday.latency, EXCLUDED.latency) WITH ORDINALITY AS bucket(kept, added, n) ORDER BY n
    )
"""
_UPSERT = f"INSERT INTO memory_usageday {_COLUMNS} VALUES ({_VALUES}) {_ADD}"
# A read's count, in the read's transaction: its only write. That transaction commits without waiting for
# the disk (synchronous_commit off, for it alone): PostgreSQL writes the count to its log within 0.6 s
# (3 x wal_writer_delay), and only a crash of the database server inside that window loses it. Waiting for
# the disk would add a flush to every read (bench/README.md "Search latency").
_UPSERT_READ = (
    f"INSERT INTO memory_usageday {_COLUMNS} SELECT {_VALUES} "
    f"FROM (SELECT set_config('synchronous_commit', 'off', true)) AS unsynchronised {_ADD}"
)
THROTTLED_TOOL = ""  # the tool of a throttled call's row: it was refused before any tool was chosen
# Quoted text in an error's message: where an id is named ("No item with id 'home' in this memory.").
_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")


def _count(
    call: Call,
    *,
    upsert: str = _UPSERT,
    requests: int = 0,
    errors: int = 0,
    items: int = 0,
    throttled: int = 0,
    duplicates: int = 0,
    secrets: int = 0,
) -> None:
    """Add these counts to the project's row for today."""
    with connection.cursor() as cursor:
        cursor.execute(
            upsert,
            {
                "project": call.context.project.pk,
                "day": timezone.now().date(),
                "tool": call.tool,
                "credential": credential(call.context),
                "surface": call.surface,
                "revision": call.revision,
                "requests": requests,
                "errors": errors,
                "items": items,
                "models": call.model_calls,
                "throttled": throttled,
                "duplicates": duplicates,
                "secrets": secrets,
                "latency": _latency(call) if requests else [0] * (len(LATENCY_BUCKETS_MS) + 1),
            },
        )


def _latency(call: Call) -> list[int]:
    """The buckets with this call counted in the one its time since dispatch falls in."""
    buckets = [0] * (len(LATENCY_BUCKETS_MS) + 1)
    buckets[bisect_left(LATENCY_BUCKETS_MS, (time.perf_counter() - call.started) * 1000)] = 1
    return buckets


def percentile_ms(buckets: list[int], fraction: float) -> int | None:
    """The upper bound (ms) of the bucket the `fraction` quantile falls in; None when nothing was counted or
    it is past the last bound."""
    total = sum(buckets)
    if not total:
        return None
    seen = 0
    for index, count in enumerate(buckets):
        seen += count
        if seen >= fraction * total:
            return LATENCY_BUCKETS_MS[index] if index < len(LATENCY_BUCKETS_MS) else None
    return None


def latency_by_tool_day(*, project_id: int, since) -> list[dict]:
    """p50 and p95 (ms, a bucket's upper bound; None past the last) per day and tool from the day `since` on,
    newest day first: the Usage page's latency table."""
    rows = UsageDay.objects.filter(project_id=project_id, day__gte=since).exclude(tool=THROTTLED_TOOL)
    summed: dict[tuple, list[int]] = {}
    for day, tool, latency in rows.values_list("day", "tool", "latency"):
        kept = summed.setdefault((day, tool), [0] * (len(LATENCY_BUCKETS_MS) + 1))
        for index, count in enumerate(latency[: len(kept)]):
            kept[index] += count
    return [
        {"day": day, "tool": tool, "calls": sum(b), "p50": percentile_ms(b, 0.5), "p95": percentile_ms(b, 0.95)}
        for (day, tool), b in sorted(summed.items(), key=lambda entry: (-entry[0][0].toordinal(), entry[0][1]))
        if sum(b)
    ]


def write_counts(body: dict) -> dict:
    """What a write's answer (or refusal) caught, as record() counts it: items added, duplicates not stored
    again, and secrets (items refused for one, fields redacted, a correction refused)."""
    items: list[dict] = body["items"] if isinstance(body.get("items"), list) else []
    statuses = [item.get("status") for item in items]
    secrets = statuses.count(REFUSED) + sum(len(item.get("redacted", ())) for item in items)
    secrets += len(body.get("redacted", ())) + ("secret" in body)
    return {
        "items_added": statuses.count(ADDED),
        "duplicates_caught": statuses.count(DUPLICATE),
        "secrets_caught": secrets,
    }


def import_counts(answer: dict) -> dict:
    """What an import's answer caught, as record() counts it (write_counts for a whole file): items added,
    duplicates (none today: an imported item carries its id, and an id is never merged), and every secret
    the gate caught (secrets_caught: items refused, fields redacted, versions and facts left out)."""
    statuses = answer["statuses"]
    return {
        "items_added": statuses.get(ADDED, 0),
        "duplicates_caught": statuses.get(DUPLICATE, 0),
        "secrets_caught": answer["secrets_caught"],
    }


def record(
    call: Call,
    *,
    items_added: int = 0,
    duplicates_caught: int = 0,
    secrets_caught: int = 0,
    error: str | None = None,
    message: str = "",
) -> None:
    """Count one call in a transaction of its own, with its error when it has one. Never fails the call it
    counts: a lost count is better than a lost answer."""
    project = call.context.project
    try:
        with scoped(project.pk):
            _count(
                call,
                requests=1,
                errors=int(error is not None),
                items=items_added,
                duplicates=duplicates_caught,
                secrets=secrets_caught,
            )
            if error is not None:
                kept = RecentError.objects.create(
                    project=project,
                    tool=call.tool,
                    credential=credential(call.context),
                    surface=call.surface,
                    error=error,
                    message=message[:MESSAGE_KEPT_MAX],
                )
                if kept.pk % TRIM_EVERY == 0:  # now and then, drop all but the newest
                    stale = RecentError.objects.filter(project=project).order_by("-at")[RECENT_ERRORS:]
                    RecentError.objects.filter(pk__in=list(stale.values_list("pk", flat=True))).delete()
    except Exception:
        log.warning("Could not record usage of %s", call.tool, exc_info=True)


def record_read(call: Call) -> None:
    """Count one answered read inside the transaction it ran in, already scoped to its end user and so to
    its project (usage rows are the project's): one statement, where `record` takes a transaction of its
    own, and a commit that does not wait for the disk (_UPSERT_READ). Never fails the read: when the count
    fails, the read's transaction (it wrote nothing) is rolled back and the count is lost, logged."""
    try:
        _count(call, upsert=_UPSERT_READ, requests=1)
    except DatabaseError:
        log.warning("Could not count a read of %s", call.tool, exc_info=True)
        transaction.set_rollback(True)


@receiver(throttled)
def record_throttled(sender, *, context: Context, surface: str, **_) -> None:
    """Count one call the rate limiter refused. Never fails the refusal it counts."""
    try:
        with scoped(context.project.pk):
            _count(Call(context, THROTTLED_TOOL, surface), throttled=1)
    except Exception:
        log.warning("Could not record a throttled call", exc_info=True)


def forget_errors_naming(*, project_id: int, ids: list[str]) -> int:
    """Delete the project's last errors whose message quotes one of the forgotten item `ids`, inside the
    forget's transaction (the project's scope); returns how many. The project keeps at most about
    RECENT_ERRORS of them, so reading them all is cheap."""
    wanted = set(ids)
    naming = [
        error.pk
        for error in RecentError.objects.filter(project_id=project_id).only("message")
        if wanted.intersection(a or b for a, b in _QUOTED.findall(error.message))
    ]
    if naming:
        RecentError.objects.filter(pk__in=naming).delete()
    return len(naming)


# ---- reads: the console's Usage page, in the project's scope ----------------------------------------------


def _sums(rows: QuerySet[UsageDay], *group: str) -> list[dict]:
    return list(rows.values(*group).annotate(**{name: Sum(name) for name in USAGE_TOTALS}).order_by(*group))


def usage_totals(*, project_id: int, since) -> dict:
    """The project's counts from the day `since` on, summed: by day, tool (throttled calls left out),
    credential, surface and MCP protocol revision (calls off MCP left out), each a list of rows in the
    group's order carrying USAGE_TOTALS; and `totals`, each total 0 when nothing was counted."""
    rows = UsageDay.objects.filter(project_id=project_id, day__gte=since)
    totals = rows.aggregate(**{name: Sum(name) for name in USAGE_TOTALS})
    return {
        "by_day": _sums(rows, "day"),
        "by_tool": _sums(rows.exclude(tool=THROTTLED_TOOL), "tool"),
        "by_credential": _sums(rows, "credential"),
        "by_surface": _sums(rows, "surface"),
        "by_revision": _sums(rows.exclude(revision=""), "revision"),
        "totals": {name: totals[name] or 0 for name in USAGE_TOTALS},
    }


def recent_errors_of(*, project_id: int, limit: int) -> list[RecentError]:
    """The project's last `limit` errors, newest first."""
    return list(RecentError.objects.filter(project_id=project_id).order_by("-at", "-pk")[:limit])
