"""GET /metrics: only for METRICS_TOKEN's bearer (a 404 while none is set), in Prometheus' text format, with
every tool call counted by surface, tool, status and MCP revision, and its latency."""

import socket
import urllib.request

import psycopg
from django.db import connection
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from accounts.services import end_user_get_or_create, project_set_rate_limits
from memory import observe
from memory.models import Item
from memory.selectors import scoped
from twin.metrics import serve_worker_metrics

TOKEN = "scrape-secret-1"
READ_METRICS = (
    "twin_items_read_total",
    "twin_add_to_searchable_seconds_count",
    "twin_texts_embedded_total",
    "twin_failed_reads_total",
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def scrape(api, token=TOKEN):
    return api.client.get("/metrics", headers={"Authorization": f"Bearer {token}"})


def samples(response) -> dict:
    text = response.content.decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def calls(found: dict, **labels) -> float:
    return found.get(("twin_tool_calls_total", tuple(sorted(labels.items()))), 0.0)


def test_without_a_token_set_there_is_no_metrics_route(api, settings):
    settings.METRICS_TOKEN = ""
    assert scrape(api).status_code == 404


def test_only_the_token_reads_it(api, settings):
    settings.METRICS_TOKEN = TOKEN
    assert scrape(api, "wrong").status_code == 401
    assert api.client.get("/metrics").status_code == 401
    assert scrape(api).status_code == 200


def test_tool_calls_are_counted_by_surface_tool_status_and_revision(api, settings):
    settings.METRICS_TOKEN = TOKEN
    search = {"surface": "http", "tool": "memory_search", "revision": "none"}
    before = samples(scrape(api))
    api.add({"text": "Ana lives in Porto.", "id": "home"})
    api.tool("search", query="Where does Ana live?")
    api.tool("search", query="")  # refused: invalid arguments
    api.mcp(
        "tools/call", {"name": "memory_search", "arguments": {"query": "Ana"}}, **{"MCP-Protocol-Version": "2025-06-18"}
    )
    after = samples(scrape(api))
    assert calls(after, **search, status="ok") - calls(before, **search, status="ok") == 1
    assert calls(after, **search, status="invalid_arguments") - calls(before, **search, status="invalid_arguments") == 1
    over_mcp = {"surface": "mcp", "tool": "memory_search", "revision": "2025-06-18", "status": "ok"}
    assert calls(after, **over_mcp) - calls(before, **over_mcp) == 1
    count = ("twin_tool_call_seconds_count", tuple(sorted(search.items())))
    assert after[count] - before.get(count, 0) == 2


def test_with_metrics_off_nothing_is_counted(api, settings):
    settings.METRICS_TOKEN, settings.METRICS_ON = TOKEN, False
    search = {"surface": "http", "tool": "memory_search", "revision": "none", "status": "invalid_arguments"}
    before = calls(samples(scrape(api)), **search)
    api.tool("search", query="")
    assert calls(samples(scrape(api)), **search) == before


def refused(found: dict, status: str, kind: str) -> float:
    return found.get(("twin_refusals_total", (("kind", kind), ("status", status))), 0.0)


def test_a_429_is_counted_by_the_limit_that_refused_it(api, project, settings):
    settings.METRICS_TOKEN = TOKEN
    project_set_rate_limits(project=project, per_credential=None, per_end_user=1)
    before = refused(samples(scrape(api)), "429", "end-user")
    assert api.tool("ls").status_code != 429 and api.tool("ls").status_code == 429
    assert refused(samples(scrape(api)), "429", "end-user") - before == 1


def test_a_503_is_counted_by_its_cause(api, settings, transactional_db):
    settings.METRICS_TOKEN = TOKEN
    before = refused(samples(scrape(api)), "503", "statement_timeout")
    db = connection.settings_dict
    blocker = psycopg.connect(
        dbname=db["NAME"], user=db["USER"], password=db["PASSWORD"] or None, host=db["HOST"], port=db["PORT"] or None
    )
    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = 200")
    try:
        blocker.execute("LOCK TABLE accounts_apikey IN ACCESS EXCLUSIVE MODE")
        assert api.get("/v1/me").status_code == 503
    finally:
        blocker.rollback()
        blocker.close()
        with connection.cursor() as cursor:
            cursor.execute("RESET statement_timeout")
    assert refused(samples(scrape(api)), "503", "statement_timeout") - before == 1


def test_the_read_counts_items_read_their_lag_and_texts_embedded(api, settings):
    settings.METRICS_TOKEN = TOKEN
    before = samples(scrape(api))
    api.add({"text": "Ana lives in Porto.", "id": "a"}, {"text": "Ben lives in Braga.", "id": "b"}, wait=False)
    after = samples(scrape(api))
    grew = {name: after.get((name, ()), 0) - before.get((name, ()), 0) for name in READ_METRICS}
    assert grew["twin_items_read_total"] == 2 and grew["twin_add_to_searchable_seconds_count"] == 2
    assert grew["twin_texts_embedded_total"] >= 2 and grew["twin_failed_reads_total"] == 0


def test_a_worker_serves_its_own_metrics(api):
    port = free_port()
    serve_worker_metrics(port)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
        assert b"twin_items_read_total" in answer.read()


def unread(project, end_user_id: str, texts: list[str]) -> None:
    """Items stored without their read queued: a backlog."""
    end_user = end_user_get_or_create(project=project, external_id=end_user_id)
    with scoped(project.pk, end_user.pk):
        for index, text in enumerate(texts):
            Item.objects.create(end_user=end_user, external_id=f"b{index}", kind="note", text=text, at=timezone.now())


def test_the_backlog_names_the_projects_furthest_behind_and_sums_the_rest(
    api, project, other_project, settings, monkeypatch
):
    settings.METRICS_TOKEN = TOKEN
    unread(project, "u_1", ["abc", "defg"])
    unread(other_project, "u_9", ["hi"])
    found = samples(scrape(api))
    assert found[("twin_read_backlog_items", (("project", str(project.pk)),))] == 2
    assert found[("twin_read_backlog_characters", (("project", str(project.pk)),))] == 7
    assert found[("twin_read_backlog_oldest_seconds", (("project", str(project.pk)),))] >= 0
    monkeypatch.setattr(observe, "BACKLOG_PROJECTS", 1)
    found = samples(scrape(api))
    assert found[("twin_read_backlog_items", (("project", "others"),))] == 1
    assert ("twin_read_backlog_items", (("project", str(other_project.pk)),)) not in found
