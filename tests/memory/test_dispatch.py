"""The path of one tool call (memory/dispatch.py), branch by branch, as a caller and the Usage page see it:
every call is answered once and counted once, whichever way it ends."""

from django.db import connection

from accounts.models import EndUser
from memory.models import RecentError, UsageDay
from memory.selectors import scoped
from tests.ops.test_unavailable import STATEMENT_MS, assert_unavailable, locked

CARD = "4111 1111 1111 1111"


def counted(project) -> dict[tuple[str, str], dict]:
    """(tool, surface) -> requests and errors counted for the project today."""
    with scoped(project.pk):
        rows = UsageDay.objects.filter(project=project)
        found: dict[tuple[str, str], dict] = {}
        for row in rows:
            entry = found.setdefault((row.tool, row.surface), {"requests": 0, "errors": 0, "items_added": 0})
            entry["requests"] += row.requests
            entry["errors"] += row.errors
            entry["items_added"] += row.items_added
        return found


def errors_kept(project) -> list[str]:
    with scoped(project.pk):
        return sorted(RecentError.objects.filter(project=project).values_list("error", flat=True))


def test_a_read_of_an_end_user_never_written_to_answers_no_memory_counted_once(api, project):
    answer = api.tool("search", query="Where does Ana live?")
    assert answer.status_code == 404 and answer.json()["error"] == "no_memory"
    assert counted(project) == {("memory_search", "http"): {"requests": 1, "errors": 1, "items_added": 0}}
    assert errors_kept(project) == ["no_memory"]
    assert not EndUser.objects.filter(project=project, external_id="u_1").exists()


def test_a_read_of_an_end_user_whose_memory_holds_nothing_answers_no_memory(api, project):
    refused = api.add({"text": f"my card is {CARD}"})  # the end user is made; the item is refused
    assert refused["items"][0]["status"] == "refused"
    assert EndUser.objects.filter(project=project, external_id="u_1").exists()
    for route, arguments in [("search", {"query": "card"}), ("ls", {}), ("overview", {}), ("grep", {"pattern": "x"})]:
        answer = api.tool(route, **arguments)
        assert answer.status_code == 404 and answer.json()["error"] == "no_memory", route


def test_a_search_that_finds_something_answers_and_is_counted_once(api, project):
    api.add({"text": "Ana moved to Porto in May", "author": "Ana"})
    answer = api.tool("search", query="Where does Ana live?")
    assert answer.status_code == 200 and answer.json()["hits"]
    assert counted(project)[("memory_search", "http")] == {"requests": 1, "errors": 0, "items_added": 0}


def test_a_write_creates_the_end_user_and_is_counted_once_with_what_it_added(api, project):
    assert not EndUser.objects.filter(project=project, external_id="u_1").exists()
    answer = api.add({"text": "Ana moved to Porto"}, {"text": "Ana likes trams"})
    assert [item["status"] for item in answer["items"]] == ["added", "added"] and answer["searchable"]
    assert EndUser.objects.filter(project=project, external_id="u_1").exists()
    assert counted(project)[("memory_add", "http")] == {"requests": 1, "errors": 0, "items_added": 2}


def test_a_write_that_does_not_create_refuses_an_end_user_never_written_to(api, project):
    answer = api.tool("forget", ids=["a"])
    assert answer.status_code == 404 and answer.json()["error"] == "no_memory"
    assert not EndUser.objects.filter(project=project, external_id="u_1").exists()


def test_a_read_key_writing_is_refused_for_scope_and_nothing_is_made(read_api, project):
    answer = read_api.tool("add", items=[{"text": "Ana moved to Porto"}])
    assert answer.status_code == 403 and answer.json()["error"] == "insufficient_scope"
    assert not EndUser.objects.filter(project=project, external_id="u_1").exists()
    assert counted(project) == {("memory_add", "http"): {"requests": 1, "errors": 1, "items_added": 0}}


def test_bad_arguments_are_refused_before_any_memory_is_opened(api, project):
    answer = api.tool("add", items=[])
    assert answer.status_code == 400 and answer.json()["field"] == "items"
    assert not EndUser.objects.filter(project=project, external_id="u_1").exists()


def test_an_mcp_call_is_counted_with_its_revision(api, project):
    api.add({"text": "Ana moved to Porto"})
    result = api.call("memory_grep", pattern="Porto")
    assert result["result"]["isError"] is False
    with scoped(project.pk):
        rows = list(UsageDay.objects.filter(project=project, tool="memory_grep").values("surface", "revision"))
    assert rows == [{"surface": "mcp", "revision": "2024-11-05"}]


def test_a_write_the_database_is_too_busy_for_answers_503_stores_nothing_and_is_not_counted(api, project):
    api.add({"text": "Ana moved to Porto", "id": "first"})
    with connection.cursor() as cursor:
        cursor.execute(f"SET statement_timeout = {STATEMENT_MS}")
    with locked("memory_item"):
        assert_unavailable(api.tool("add", items=[{"text": "Ana likes trams", "id": "second"}]))
    with connection.cursor() as cursor:
        cursor.execute("RESET statement_timeout")
    assert counted(project)[("memory_add", "http")]["requests"] == 1  # the first add only
    listing = api.tool("grep", pattern="trams")
    assert listing.status_code == 200 and listing.json()["hits"] == []
