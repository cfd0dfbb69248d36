"""The API key cache (accounts/keycache.py): a key in use costs no database read, and whatever changes a key
or its project holds from the very next request, in every process."""

import pytest
import redis
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts import keycache, ratelimit
from accounts.models import ApiKey
from accounts.services import api_key_revoke, hash_key, project_set_rate_limits
from tests.console import logged_in
from twin import quick_redis


def key_reads(api) -> int:
    """How many times one request reads the key from the database."""
    with CaptureQueriesContext(connection) as queries:
        api.tool("ls")
    return sum('FROM "accounts_apikey"' in q["sql"] for q in queries.captured_queries)


def test_a_key_in_use_is_read_once(api, write_key):
    assert key_reads(api) == 1
    assert keycache.cached(write_key[0].key_hash) is not None
    assert key_reads(api) == 0
    assert api.tool("ls").status_code in (200, 404)


def test_a_revoked_key_is_refused_on_its_very_next_request(api, write_key, alice, project):
    api.tool("ls")
    assert keycache.cached(write_key[0].key_hash) is not None
    revoked = logged_in(alice).post(f"/projects/{project.slug}/keys/{write_key[0].pk}/revoke")
    assert revoked.status_code == 302
    answer = api.tool("ls")
    assert answer.status_code == 401 and answer.json()["error"] == "revoked_key"


def test_another_process_still_holding_the_key_refuses_it_on_its_next_request(api, write_key):
    api.tool("ls")
    held = keycache.cached(write_key[0].key_hash)
    assert held is not None
    api_key_revoke(key=ApiKey.objects.get(pk=write_key[0].pk))  # as another process would: it renews the token
    keycache._cache[write_key[0].key_hash] = held  # this process still holds the key as it read it
    answer = api.tool("ls")
    assert answer.status_code == 401 and answer.json()["error"] == "revoked_key"


def test_a_token_gone_from_redis_is_never_trusted(api, write_key):
    api.tool("ls")
    ApiKey.objects.filter(pk=write_key[0].pk).update(revoked_at="2026-01-01T00:00:00Z")  # no signal, no token
    quick_redis.client(1).delete(keycache.generation_key(write_key[0].key_hash))  # as a Redis restarted empty
    assert api.tool("ls").status_code == 401


def test_a_projects_new_limits_hold_from_the_next_request_of_a_cached_key(api, project):
    api.tool("ls")
    project_set_rate_limits(project=project, per_credential=None, per_end_user=1)
    assert api.tool("ls").status_code == 429


def test_a_deleted_project_takes_its_cached_keys_with_it(api, alice, project):
    api.tool("ls")
    deleted = logged_in(alice).post(f"/projects/{project.slug}/delete", {"confirm": project.name})
    assert deleted.status_code == 302
    assert api.tool("ls").status_code == 401


def test_a_change_redis_does_not_take_is_not_made(write_key, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    with pytest.raises(redis.RedisError):
        api_key_revoke(key=ApiKey.objects.get(pk=write_key[0].pk))
    assert ApiKey.objects.get(pk=write_key[0].pk).revoked_at is None


@pytest.mark.parametrize("down", ["paused", "closed"])
def test_without_redis_the_key_is_read_from_the_database(api, write_key, settings, monkeypatch, down):
    api.tool("ls")
    monkeypatch.setattr(ratelimit, "_paused_until", 0.0)  # restored after the test
    ApiKey.objects.filter(pk=write_key[0].pk).update(revoked_at="2026-01-01T00:00:00Z")  # unseen by the cache
    if down == "paused":
        monkeypatch.setattr(ratelimit, "_paused_until", float("inf"))
    else:
        settings.REDIS_URL = "redis://127.0.0.1:1/0"
    assert api.tool("ls").status_code == 401
    assert keycache.cached(hash_key("tm_never_issued")) is None
