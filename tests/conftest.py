"""The test base: Alice owns a project, Bob is on her team, Charlie is an outsider with his own project.

Everything runs on the real embedded PostgreSQL with pgvector and the real Redis. Celery runs eagerly in
the test process for speed; the background read, retries and the broker-down case use a real worker
(tests/worker.py). The test database is created and migrated by twin_owner and every test connects as
twin_app, as the service does, so row-level security holds the tests' code paths as it holds the service's.
"""

import json
import os
import re
from typing import cast

import pytest
from django.db.backends.postgresql.base import DatabaseWrapper as PostgresWrapper
from django.test import Client

from accounts.models import Membership, Role
from accounts.services import api_key_create, project_create, user_get_or_create
from mcp_server import stdio
from twin.celery import app as celery_app
from twin.database import DEFAULT, OWNER

# Fixture modules every test may ask for by name: the fake model server (`fake_llm`).
pytest_plugins = ["tests.fake_llm"]

TEST_QUEUE = f"twin-test-{os.getpid()}"


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """A test database of this run's own, so two runs on one machine (a developer's, CI's) never collide."""
    from django.conf import settings

    for alias in (DEFAULT, OWNER):
        database = settings.DATABASES[alias]
        database.setdefault("TEST", {})["NAME"] = f"test_{database['NAME']}_{os.getpid()}"


@pytest.fixture(scope="session")
def django_db_setup(request, django_test_environment, django_db_blocker, django_db_modify_db_settings):
    """The test database, created and migrated as twin_owner (the OWNER alias: it owns every table); the
    default alias, twin_app, then connects to it. In place of pytest-django's, which would create it as the
    default alias."""
    from django.db import connections

    verbosity = request.config.option.verbose
    owner, app = connections[OWNER], cast(PostgresWrapper, connections[DEFAULT])
    with django_db_blocker.unblock():
        old_name = owner.settings_dict["NAME"]
        owner.creation.create_test_db(verbosity=verbosity, autoclobber=True, serialize=False)
        app.creation.set_as_test_mirror(owner.settings_dict)
        app.close_pool()  # the test process is a web one: its pool opens on the test database
    yield
    with django_db_blocker.unblock():
        app = cast(PostgresWrapper, connections[DEFAULT])
        app.close()
        app.close_pool()  # its connections would keep the test database from being dropped
        owner.creation.destroy_test_db(old_name, verbosity=verbosity)


@pytest.fixture(autouse=True, scope="session")
def _celery_for_tests():
    # Eager by default; a test queue of its own so a developer's running worker never takes test tasks.
    celery_app.conf.task_always_eager = True
    celery_app.conf.task_default_queue = TEST_QUEUE
    yield


@pytest.fixture(autouse=True, scope="session")
def _cache_of_this_run():
    """Cache keys of this run's own (rate-limit counters, locks), so runs side by side or one right after
    another never share an allowance; processes the tests start inherit it through the environment."""
    from django.conf import settings
    from django.test.signals import setting_changed

    os.environ["TWIN_CACHE_PREFIX"] = f"twin-test-{os.getpid()}"
    settings.CACHES["default"]["KEY_PREFIX"] = os.environ["TWIN_CACHE_PREFIX"]
    setting_changed.send(sender=None, setting="CACHES", value=settings.CACHES, enter=True)  # drops made caches
    yield


@pytest.fixture(autouse=True)
def _no_real_model(settings):
    # A developer's OPENROUTER_API_KEY must never make the suite call a real model; fake_llm sets its own.
    settings.LLM_BASE_URL = settings.LLM_API_KEY = ""


class Api:
    """A caller of the HTTP API with one key and one end user."""

    def __init__(self, key: str | None, account: str | None):
        self.key, self.account = key, account
        self.client = Client()

    def headers(self, **extra) -> dict:
        headers = {}
        if self.key is not None:
            headers["Authorization"] = f"Bearer {self.key}"
        if self.account is not None:
            headers["X-Twin-Account"] = self.account
        headers.update(extra)
        return headers

    def get(self, path, **extra):
        return self.client.get(path, headers=self.headers(**extra))

    def post(self, path, body=None, **extra):
        return self.client.post(
            path,
            data=json.dumps(body if body is not None else {}),
            content_type="application/json",
            headers=self.headers(**extra),
        )

    def as_account(self, account):
        return Api(self.key, account)

    def tool(self, name: str, **arguments):
        """POST /v1/memory/<name>: the tool's HTTP route."""
        return self.post(f"/v1/memory/{name}", arguments)

    def add(self, *items, wait=True):
        response = self.tool("add", items=list(items), wait=wait)
        assert response.status_code == 200, response.content
        return response.json()

    def mcp(self, method: str, params=None, request_id=1, **headers):
        """One JSON-RPC message to /v1/mcp."""
        message = {"jsonrpc": "2.0", "method": method}
        if request_id is not None:
            message["id"] = request_id
        if params is not None:
            message["params"] = params
        return self.post("/v1/mcp", message, **headers)

    def call(self, name: str, **arguments):
        """tools/call over MCP; returns the JSON-RPC result (or error) as a dict."""
        response = self.mcp("tools/call", {"name": name, "arguments": arguments})
        return response.json()


def stdio_answer(session, line: str) -> dict:
    """The stdio server's answer to a request's line (a request always has one; a notification has none)."""
    answer = stdio.answer(session, line)
    assert answer is not None, line
    return answer


def first_group(pattern: str, text) -> str:
    """Group 1 of `pattern`'s first match in `text` (a page, an email's body); the test fails if none matches."""
    found = re.search(pattern, str(text))
    assert found, f"{pattern!r} is not in {text!r}"
    return found.group(1)


def make_user(name: str):
    """A console user `<name>@example.com` whose password is `<name>-password-1`."""
    user, _ = user_get_or_create(email=f"{name}@example.com")
    user.set_password(f"{name}-password-1")
    user.save()
    return user


@pytest.fixture
def alice(transactional_db):
    return make_user("alice")


@pytest.fixture
def project(alice):
    return project_create(name="Alice Co", owner=alice)


@pytest.fixture
def bob(project):
    user = make_user("bob")
    Membership.objects.create(user=user, project=project, role=Role.MEMBER)
    return user


@pytest.fixture
def charlie(transactional_db):
    return make_user("charlie")


@pytest.fixture
def other_project(charlie):
    return project_create(name="Charlie Co", owner=charlie)


@pytest.fixture
def write_key(project, alice):
    return api_key_create(project=project, access="write", name="alice write", created_by=alice)


@pytest.fixture
def read_key(project, alice):
    return api_key_create(project=project, access="read", name="alice read", created_by=alice)


@pytest.fixture
def api(write_key):
    """Alice's read-and-write key, for end user u_1."""
    return Api(write_key[1], "u_1")


@pytest.fixture
def read_api(read_key):
    return Api(read_key[1], "u_1")


@pytest.fixture
def charlie_api(other_project, charlie):
    _, raw = api_key_create(project=other_project, access="write", created_by=charlie)
    return Api(raw, "u_1")
