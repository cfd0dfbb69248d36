"""GET /v1/me: the one authentication step, and its 400/401 answers."""

from accounts.models import ApiKey
from accounts.services import api_key_revoke


def test_it_answers_the_context_of_a_write_key(api, project):
    response = api.get("/v1/me")
    assert response.status_code == 200
    body = response.json()
    assert body["project"] == {"slug": project.slug, "name": "Alice Co"}
    assert body["end_user"] == {"id": "u_1", "exists": False}
    assert body["access"] == "write"
    assert body["key"]["prefix"].startswith("tm_")


def test_it_answers_the_context_of_a_read_key(read_api):
    assert read_api.get("/v1/me").json()["access"] == "read"


def test_it_needs_a_key(api):
    api.key = None
    response = api.get("/v1/me")
    assert response.status_code == 401
    assert response.json()["error"] == "missing_key"
    assert "Bearer" in response.json()["message"]


def test_it_refuses_a_key_it_did_not_issue(api):
    api.key = "tm_" + "x" * 43
    response = api.get("/v1/me")
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_key"


def test_it_refuses_a_non_bearer_scheme(api):
    response = api.client.get("/v1/me", headers={"Authorization": f"Basic {api.key}", "X-Twin-Account": "u_1"})
    assert response.status_code == 401


def test_a_revoked_key_fails_at_once(api, write_key):
    assert api.get("/v1/me").status_code == 200
    api_key_revoke(key=write_key[0])
    response = api.get("/v1/me")
    assert response.status_code == 401
    assert response.json()["error"] == "revoked_key"


def test_it_needs_an_account(api):
    api.account = None
    response = api.get("/v1/me")
    assert response.status_code == 400
    assert response.json()["error"] == "missing_account"
    assert "X-Twin-Account" in response.json()["message"]


def test_it_checks_the_account_length(api):
    assert api.as_account("a" * 128).get("/v1/me").status_code == 200
    response = api.as_account("a" * 129).get("/v1/me")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_account"
    assert "128" in response.json()["message"]


def test_it_checks_the_account_characters(api):
    assert api.as_account("user_42-x.y:z@example.com").get("/v1/me").status_code == 200
    for bad in ["user 42", "user/42", "ü", "a,b", "<script>"]:
        response = api.as_account(bad).get("/v1/me")
        assert response.status_code == 400, bad
        assert response.json()["error"] == "invalid_account"


def test_the_key_is_checked_before_the_account(api):
    api.key, api.account = None, None
    assert api.get("/v1/me").status_code == 401


def test_it_records_when_a_key_was_last_used(api, write_key):
    assert write_key[0].last_used_at is None
    api.get("/v1/me")
    assert ApiKey.objects.get(pk=write_key[0].pk).last_used_at is not None
