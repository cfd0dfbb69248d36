"""API keys: shown once, stored hashed, scoped to their project."""

import hashlib
import re

from django.db import connection

from accounts.models import ApiKey


def test_it_mints_a_long_random_key(write_key):
    _, raw = write_key
    assert re.fullmatch(r"tm_[A-Za-z0-9_-]{32,}", raw)


def test_it_stores_only_a_hash(write_key):
    key, raw = write_key
    assert key.key_hash == hashlib.sha256(raw.encode()).hexdigest()
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM accounts_apikey")
        rows = cursor.fetchall()
    assert rows and all(raw not in str(row) for row in rows)


def test_it_keeps_a_short_prefix_for_display(write_key):
    key, raw = write_key
    assert raw.startswith(key.prefix)
    assert len(key.prefix) <= 12


def test_keys_are_unique(project):
    from accounts.services import api_key_create

    raws = {api_key_create(project=project, access="read")[1] for _ in range(20)}
    assert len(raws) == 20
    assert ApiKey.objects.filter(project=project).count() == 20


def test_a_key_reaches_only_its_own_project(api, charlie_api, project, other_project):
    # The same end-user id under two projects is two different people.
    assert api.get("/v1/me").json()["project"]["slug"] == project.slug
    assert charlie_api.get("/v1/me").json()["project"]["slug"] == other_project.slug
