"""The Usage page shows p50 and p95 per tool per day, from latency buckets counted in the same upsert as the
requests (no row per call): every counted call is in one bucket, and calls of a day and tool add up."""

from django.utils import timezone

from memory.models import UsageDay
from memory.selectors import scoped
from memory.usage import LATENCY_BUCKETS_MS, percentile_ms
from tests.console import html, logged_in


def test_the_usage_page_shows_p50_and_p95_per_tool_per_day(alice, project, api):
    api.add({"text": "I like tea."})
    for _ in range(3):
        api.tool("search", query="tea")
    with scoped(project.pk):
        rows = list(UsageDay.objects.filter(project=project, tool="memory_search"))
    assert sum(r.requests for r in rows) == 3
    assert sum(sum(r.latency) for r in rows) == 3 and all(len(r.latency) == len(LATENCY_BUCKETS_MS) + 1 for r in rows)
    page = html(logged_in(alice).get(f"/projects/{project.slug}/usage"))
    table = page.split('id="latency"', 1)[1].split("</table>", 1)[0]
    today = timezone.now().date().isoformat()
    row = next(line for line in table.split("<tr>") if "<code>memory_search</code>" in line)
    assert today in row and '<td class="num">3</td>' in row and row.count(" ms</td>") == 2


def test_a_percentile_is_the_bound_of_its_bucket():
    buckets = [0] * (len(LATENCY_BUCKETS_MS) + 1)
    assert percentile_ms(buckets, 0.5) is None
    buckets[1], buckets[4] = 10, 1  # ten calls under 10 ms, one under 100 ms
    assert percentile_ms(buckets, 0.5) == 10 and percentile_ms(buckets, 0.95) == 100
    buckets[-1] = 100  # most slower than the last bound
    assert percentile_ms(buckets, 0.95) is None
