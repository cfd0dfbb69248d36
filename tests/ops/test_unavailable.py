"""Busy is an answer, on every surface: a statement that runs past its timeout (here, one waiting on a table
the test locks) answers 503 with Retry-After and {"error": "unavailable"} on /v1/me, the console and
/v1/memory/*, and JSON-RPC error -32010 over MCP; never a 500. The pool and the dependencies going away are
in tests/ops/test_faults.py, on a service of its own."""

import contextlib

import psycopg
import pytest
from django.db import connection

from memory.models import RecentError
from memory.selectors import scoped
from tests.console import logged_in

STATEMENT_MS = 200  # the service's statement timeout is 5 s; this test's connection gives up sooner
QUESTION = "Where does Ana live?"


@pytest.fixture
def impatient(transactional_db):
    """The test's connection (which the views it calls use) gives up on a statement after STATEMENT_MS."""
    with connection.cursor() as cursor:
        cursor.execute(f"SET statement_timeout = {STATEMENT_MS}")
    yield
    with connection.cursor() as cursor:
        cursor.execute("RESET statement_timeout")


@contextlib.contextmanager
def locked(table: str):
    """`table` locked against every reader by a connection of the test's own, until the block ends."""
    db = connection.settings_dict
    blocker = psycopg.connect(
        dbname=db["NAME"], user=db["USER"], password=db["PASSWORD"] or None, host=db["HOST"], port=db["PORT"] or None
    )
    try:
        blocker.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        yield
    finally:
        blocker.rollback()
        blocker.close()


def assert_unavailable(response):
    assert response.status_code == 503, response.content
    assert response["Retry-After"] == "1"
    assert response.json()["error"] == "unavailable" and response.json()["retry_after"] == 1


def test_me_answers_503_when_its_key_cannot_be_read_in_time(api, impatient):
    with locked("accounts_apikey"):
        assert_unavailable(api.get("/v1/me"))
    assert api.get("/v1/me").status_code == 200


def test_the_console_answers_503_when_its_page_cannot_be_read_in_time(alice, project, impatient):
    browser = logged_in(alice)
    with locked("accounts_project"):
        assert_unavailable(browser.get("/"))


def test_a_tool_answers_503_when_memory_cannot_be_read_in_time(api, impatient):
    api.add({"text": "Ana lives in Porto.", "id": "home"})
    with locked("memory_passage"):  # what every search reads
        assert_unavailable(api.tool("search", query=QUESTION))
    assert api.tool("search", query=QUESTION).status_code == 200


def test_over_mcp_a_tool_that_cannot_answer_in_time_is_error_32010(api, impatient):
    api.add({"text": "Ana lives in Porto.", "id": "home"})
    with locked("memory_passage"):
        response = api.mcp("tools/call", {"name": "memory_search", "arguments": {"query": QUESTION}}, request_id=7)
    assert response.status_code == 503 and response["Retry-After"] == "1"
    assert response.json()["id"] == 7
    assert response.json()["error"]["code"] == -32010
    request_id = response["X-Request-Id"]
    assert response.json()["error"]["data"] == {"error": "unavailable", "retry_after": 1, "request_id": request_id}


def test_over_mcp_a_credential_that_cannot_be_read_in_time_is_error_32010(api, impatient):
    with locked("accounts_apikey"):
        response = api.mcp("tools/list")
    assert response.status_code == 503 and response["Retry-After"] == "1"
    assert response.json()["error"]["code"] == -32010


def test_a_call_answered_503_is_not_recorded_as_a_failed_call(api, project, impatient):
    """The tool did not fail, the service was busy: the Usage page lists no error for it (recording one would
    only wait on the database again)."""
    api.add({"text": "Ana lives in Porto.", "id": "home"})
    with locked("memory_item"):
        assert_unavailable(api.tool("grep", pattern="Porto"))
    with scoped(project.pk):
        assert not RecentError.objects.filter(tool="memory_grep").exists()
