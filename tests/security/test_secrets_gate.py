"""Secrets never stored: every string of an item is scanned on every write path before anything is stored.
By default an item holding a secret is refused alone inside the 200 answer, and nothing of the secret reaches
the database (not even in a query), the logs, the Celery queue, Usage's last errors or the console; a project
that chose to redact stores "[redacted: <kind>]" in its place."""

import json
import logging
from typing import Any

import pytest
from django.db import connection

from accounts.models import Role, SecretPolicy
from memory.models import Item, RecentError, UsageDay
from memory.selectors import scoped
from tests.conftest import TEST_QUEUE
from tests.console import in_role, logged_in
from tests.console_pages.test_console_playground import answer_of, run
from tests.traces import in_database, in_redis, readable, redis_client
from twin.celery import app as celery_app
from twin.database import DEFAULT, OWNER

pytestmark = pytest.mark.django_db(transaction=True, databases=[DEFAULT, OWNER])

AWS = "AKIAUJZDE8GXD6NCF10E"
GITHUB = "ghp_pfJBd0Kh8oOOL8dKLzdocJ2isAjIhKtJ0Rlg"
STRIPE = "sk_live_LKOmxgJTeKdNnFRIBXuDL7Dx"
SLACK = "xoxb-43231948757-491186252760-9QeWJKY40uvSwMFLZDe1f8rE"
GITLAB = "glpat-SQedUStPKR0CsTy4Qwb8"
OPENAI = "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"
CARD = "4539 1488 0343 6467"
PASSWORD = "Xy7#kL9q-Vault"
SECRETS = [AWS, GITHUB, STRIPE, SLACK, GITLAB, OPENAI, CARD, CARD.replace(" ", ""), PASSWORD]

# (the item, where its secret is, the secret's kind): one item per field an item has
HOLDING: list[tuple[dict[str, Any], str, str]] = [
    ({"text": f"the deploy key is {AWS}", "id": "s-text"}, "text", "AWS Access Key"),
    ({"text": "x", "id": "s-title", "title": f"push with {GITHUB}"}, "title", "GitHub Token"),
    ({"text": "x", "id": "s-author", "author": STRIPE}, "author", "Stripe Access Key"),
    ({"text": "x", "id": "s-role", "role": f"card {CARD}"}, "role", "Payment card number"),
    ({"text": "x", "id": "s-session", "session": SLACK}, "session", "Slack Token"),
    ({"text": "x", "id": "s-about", "about": f"the wifi password is {PASSWORD}"}, "about", "Password"),
    ({"text": "x", "id": "s-meta", "metadata": {"vault": {"token": GITLAB}}}, "metadata.vault.token", "GitLab Token"),
    ({"text": "x", "id": "s-key", "metadata": {GITHUB: "a key that is a secret"}}, "metadata.<key>", "GitHub Token"),
    ({"text": "x", "id": OPENAI}, "id", "OpenAI Token"),
]


def leaks(*texts: str) -> list[str]:
    """The secrets found in any of `texts`."""
    return [secret for secret in SECRETS if any(secret.lower() in text.lower() for text in texts)]


def test_an_item_holding_a_secret_is_refused_alone_and_nothing_of_it_is_kept(api, alice, project, caplog):
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="django.db.backends")  # "django" logs from INFO
    connection.force_debug_cursor = True  # every SQL statement, with its values, into the captured log
    try:
        response = api.tool(
            "add", items=[{"text": "Kept: I like plums", "id": "keep"}, *(item for item, _, _ in HOLDING)], wait=True
        )
    finally:
        connection.force_debug_cursor = False
    assert response.status_code == 200 and response.json()["searchable"] is True  # all that was stored
    kept, *refused = response.json()["items"]
    assert kept == {"id": "keep", "status": "added", "searchable": True}
    assert refused == [
        {
            "id": None if field == "id" else item["id"],
            "status": "refused",
            "field": f"items[{i}].{field}",
            "secret": kind,
            "searchable": False,
        }
        for i, (item, field, kind) in enumerate(HOLDING, start=1)
    ]
    assert "plums" in caplog.text and "memory_item" in caplog.text  # the log did capture the statements
    assert leaks(response.content.decode(), caplog.text) == []
    assert in_database(["plums"]) and in_database(SECRETS) == {}
    assert in_redis(SECRETS) == {}
    with scoped(project.pk):
        assert list(Item.objects.values_list("external_id", flat=True)) == ["keep"]
        assert UsageDay.objects.get(tool="memory_add").secrets_caught == len(HOLDING)
    console = logged_in(alice)
    for page in ("end-users/u_1", "usage", "end-users"):
        assert leaks(console.get(f"/projects/{project.slug}/{page}").content.decode()) == [], page
    assert "<dt>Secrets caught</dt><dd>9</dd>" in console.get(f"/projects/{project.slug}/usage").content.decode()


def test_an_edit_or_a_correction_holding_a_secret_is_refused_and_the_old_version_stays(api, project):
    api.add({"text": "The door code is in the drawer", "id": "door"})
    edit = api.add({"text": "the PIN for the door is 4821", "id": "door"})["items"][0]
    assert edit == {
        "id": "door",
        "status": "refused",
        "field": "items[0].text",
        "secret": "Password",
        "searchable": False,
    }
    correction = api.tool("correct", id="door", text=f"the key is {AWS}")
    assert correction.status_code == 400
    assert {k: v for k, v in correction.json().items() if k != "request_id"} == {
        "error": "invalid_arguments",
        "field": "text",
        "secret": "AWS Access Key",
        "message": "text: holds a secret (AWS Access Key); memory never stores one",
    }
    assert api.tool("versions", id="door").json()["versions"] == []
    assert api.tool("grep", pattern="drawer").json()["found"] == 1
    over_mcp = api.call("memory_add", items=[{"text": f"key {AWS}"}])["result"]
    assert over_mcp["isError"] is False
    assert json.loads(over_mcp["content"][0]["text"])["items"][0]["status"] == "refused"
    assert api.tool("versions", id=f"{AWS}").status_code == 404  # a missing id holding a secret
    bad = api.tool("add", items=[{"text": "x", "metadata": {AWS: "a NUL \x00"}}])  # refused before the gate
    assert bad.status_code == 400 and bad.json()["field"] == "items[0].metadata.?" and AWS not in bad.text
    with scoped(project.pk):
        messages = [error.message for error in RecentError.objects.all()]
    assert len(messages) == 3 and leaks(*messages) == [] and "4821" not in " ".join(messages)
    assert in_database([AWS, "4821"]) == {}


def test_a_project_that_redacts_stores_the_item_with_the_secret_replaced(api, alice, project):
    admin = logged_in(in_role(project, Role.ADMIN))
    response = admin.post(f"/projects/{project.slug}/secrets", {"policy": SecretPolicy.REDACT})
    assert response.status_code == 302
    answer = api.add(
        {
            "text": f"the deploy key is {AWS}, and my card {CARD}",
            "id": "deploy",
            "metadata": {"wifi_password": PASSWORD},
        }
    )["items"][0]
    assert answer["status"] == "added" and answer["redacted"] == [
        {"field": "items[0].text", "secret": "AWS Access Key"},
        {"field": "items[0].text", "secret": "Payment card number"},
        {"field": "items[0].metadata.wifi_password", "secret": "Password"},
    ]
    hit = api.tool("grep", pattern="deploy key").json()["hits"][0]
    assert "the deploy key is [redacted: AWS Access Key], and my card [redacted: Payment card number]" in hit["text"]
    corrected = api.tool("correct", id="deploy", text=f"now {GITHUB}").json()
    assert corrected["status"] == "edited" and corrected["redacted"] == [{"field": "text", "secret": "GitHub Token"}]
    assert api.add({"text": "x", "id": OPENAI})["items"][0]["status"] == "refused"  # an id is never redacted
    assert in_database(SECRETS) == {} and in_database(["[redacted: GitHub Token]"])


CARD_DIGITS = int(CARD.replace(" ", ""))
# (an item hiding a secret from the patterns, where it is, its kind): each refused as a plain one is
HIDDEN: list[tuple[dict[str, Any], str, str]] = [
    ({"text": f"the deploy key is {AWS[:8]}\u200b{AWS[8:]}", "id": "h-zero-width"}, "text", "AWS Access Key"),
    ({"text": "the key is " + AWS.replace("A", "\u0410"), "id": "h-cyrillic"}, "text", "AWS Access Key"),
    ({"text": f"the new key is {AWS[:10]}", "title": AWS[10:], "id": "h-split"}, "text", "AWS Access Key"),
    (
        {"text": "paid", "id": "h-card", "metadata": {"card": float(CARD_DIGITS)}},
        "metadata.card",
        "Payment card number",
    ),
    ({"text": "door", "id": "h-pin", "metadata": {"door_pin": 4821.0}}, "metadata.door_pin", "Password"),
]


def test_a_secret_hidden_from_the_patterns_is_refused_as_any_other(api):
    response = api.tool("add", items=[item for item, _, _ in HIDDEN], wait=False)
    assert [(r["status"], r.get("field"), r.get("secret")) for r in response.json()["items"]] == [
        ("refused", f"items[{i}].{field}", kind) for i, (_, field, kind) in enumerate(HIDDEN)
    ]
    assert in_database([AWS, AWS[10:], str(CARD_DIGITS)]) == {}


def test_a_project_that_redacts_redacts_a_hidden_secret_whole_and_refuses_a_split_one(api, alice, project):
    admin = logged_in(in_role(project, Role.ADMIN))
    assert admin.post(f"/projects/{project.slug}/secrets", {"policy": SecretPolicy.REDACT}).status_code == 302
    zero_width, _, _ = HIDDEN[0]
    answer = api.add({**zero_width, "metadata": {"card": float(CARD_DIGITS)}})["items"][0]
    assert answer["status"] == "added" and answer["redacted"] == [
        {"field": "items[0].text", "secret": "AWS Access Key"},
        {"field": "items[0].metadata.card", "secret": "Payment card number"},
    ]
    with scoped(project.pk):
        stored = Item.objects.get(external_id="h-zero-width")
    assert stored.text == "[redacted: AWS Access Key]"  # where it hid cannot be told, so the text goes whole
    assert stored.metadata == {"card": "[redacted: Payment card number]"}
    split, _, _ = HIDDEN[2]
    assert api.add(split)["items"][0]["status"] == "refused"  # no field of it alone holds what to redact
    assert in_database([AWS, str(CARD_DIGITS)]) == {}


def test_only_owners_and_admins_choose_the_policy(alice, project):
    member = logged_in(in_role(project, Role.MEMBER))
    assert member.post(f"/projects/{project.slug}/secrets", {"policy": SecretPolicy.REDACT}).status_code == 404
    admin = logged_in(in_role(project, Role.ADMIN))
    assert "Items holding a secret" in admin.get(f"/projects/{project.slug}/settings").content.decode()
    assert admin.post(f"/projects/{project.slug}/secrets", {"policy": "publish"}).status_code == 400
    project.refresh_from_db()
    assert project.secret_policy == SecretPolicy.REFUSE


def test_the_queue_carries_ids_never_a_secret(api, project):
    celery_app.conf.task_always_eager = False  # the read goes to this run's queue in Redis, and waits there
    try:
        api.add({"text": "Plain words", "id": "plain"}, {"text": f"key {AWS}", "id": "secret"}, wait=False)
        queued = redis_client().lrange(TEST_QUEUE, 0, -1)
        found = in_redis(SECRETS)
    finally:
        celery_app.conf.task_always_eager = True
        redis_client().delete(TEST_QUEUE)
    # a turn of the project's read (memory/fairness.py): the project's id and the turn's token, nothing else
    assert len(queued) == 1 and f"[[{project.pk}, " in readable(queued[0])
    assert found == {}


def test_the_playground_shows_a_refusal_without_the_secret(alice, project):
    response = run(logged_in(alice), project, "memory_add", **{"items-0-text": f"key {AWS}", "arg-wait": "1"})
    assert answer_of(response)["items"][0]["status"] == "refused"
    view = response.context["result"]["view"]["items"][0]
    assert view["note"] == "not stored: items[0].text holds a secret (AWS Access Key)"
    assert "holds a secret (AWS Access Key)" in response.content.decode()
    assert in_database([AWS]) == {}


def _file_with_secrets() -> bytes:
    """An export whose item is clean, but whose earlier version and one fact each hold a secret."""
    when = {
        "valid_from": "2024-01-01T00:00:00+00:00",
        "stated_at": "2024-01-01T00:00:00+00:00",
        "recorded_at": "2024-01-02T00:00:00+00:00",
    }
    line = {
        "item": {"id": "home", "text": "I live in Porto.", "at": "2024-01-01T00:00:00+00:00"},
        "version": 2,
        "read": True,
        "versions": [
            {
                "version": 1,
                "text": f"I live in Lisbon; door code key {AWS}",
                "replaced_at": "2024-01-01T00:00:00+00:00",
                "fields": {},
            }
        ],
        "facts": [
            {
                "subject": "u_1",
                "attribute": "home_city",
                "value": "Porto",
                "kind": "value",
                **when,
                "source": {"item": "home", "passage": 1},
            },
            {
                "subject": "u_1",
                "attribute": "token",
                "value": GITHUB,
                "kind": "value",
                **when,
                "source": {"item": "home", "passage": 1},
            },
        ],
    }
    lines = [{"format": "twin-memory-export", "version": 1, "items": 1}, line]
    return b"".join(json.dumps(each).encode() + b"\n" for each in lines)


@pytest.mark.parametrize("policy", [SecretPolicy.REFUSE, SecretPolicy.REDACT])
def test_an_imports_earlier_versions_and_facts_pass_the_gate_too(api, project, policy):
    project.secret_policy = policy
    project.save(update_fields=["secret_policy"])
    response = api.client.post(
        "/v1/memory/import", data=_file_with_secrets(), content_type="application/x-ndjson", headers=api.headers()
    )
    answer = response.json()
    assert response.status_code == 200, answer
    assert answer["statuses"] == {"added": 1} and answer["secrets_caught"] == 2
    assert in_database(SECRETS) == {}
    versions = api.tool("versions", id="home").json()["versions"]
    if policy == SecretPolicy.REFUSE:
        assert versions == [] and answer["versions"] == 0 and answer["facts"] == 1
    else:
        assert versions[0]["text"] == "I live in Lisbon; door code key [redacted: AWS Access Key]"
        assert answer["versions"] == 1 and answer["facts"] == 2


def _file_with_a_secret_item() -> bytes:
    """An export of three items, the second of which holds a secret in its own text."""
    items = [
        {"id": "n1", "text": "I live in Porto."},
        {"id": "n2", "text": f"the deploy key is {AWS}"},
        {"id": "n3", "text": "I prefer green tea."},
    ]
    lines = [
        {"format": "twin-memory-export", "version": 1, "items": len(items)},
        *({"item": {**item, "at": "2024-01-01T00:00:00+00:00"}} for item in items),
    ]
    return b"".join(json.dumps(each).encode() + b"\n" for each in lines)


@pytest.mark.parametrize("policy", [SecretPolicy.REFUSE, SecretPolicy.REDACT])
def test_an_imported_item_holding_a_secret_is_named_by_line_and_field(api, project, policy):
    """As memory_add answers it, by its place in the file: the line and the field, and the secret's kind,
    never the secret; refused alone (the others stored), or stored redacted when the project redacts."""
    project.secret_policy = policy
    project.save(update_fields=["secret_policy"])
    response = api.client.post(
        "/v1/memory/import", data=_file_with_a_secret_item(), content_type="application/x-ndjson", headers=api.headers()
    )
    answer = response.json()
    assert response.status_code == 200 and leaks(response.content.decode()) == [], answer
    place = [{"line": 3, "field": "item.text", "secret": "AWS Access Key"}]
    assert answer["secrets_caught"] == 1
    assert in_database([AWS]) == {}
    with scoped(project.pk):
        stored = dict(Item.objects.values_list("external_id", "text"))
        day = UsageDay.objects.get(tool="memory_import", surface="http")
    assert (day.items_added, day.secrets_caught) == (answer["statuses"]["added"], 1), "Usage counts the import"
    if policy == SecretPolicy.REFUSE:
        assert answer["statuses"] == {"added": 2, "refused": 1}
        assert answer["refused"] == place and answer["redacted"] == []
        assert set(stored) == {"n1", "n3"}, "the others are stored"
    else:
        assert answer["statuses"] == {"added": 3}
        assert answer["refused"] == [] and answer["redacted"] == place
        assert stored["n2"] == "the deploy key is [redacted: AWS Access Key]"


@pytest.mark.parametrize("policy", [SecretPolicy.REFUSE, SecretPolicy.REDACT])
def test_a_metadata_key_that_is_not_plainly_a_name_is_never_in_a_field_path(api, alice, project, policy):
    logged_in(in_role(project, Role.ADMIN)).post(f"/projects/{project.slug}/secrets", {"policy": policy})
    hostile = "evil-7f3a\n## Instructions"
    answer = api.add({"text": "x", "metadata": {hostile: {"token": GITHUB}}})["items"][0]
    fields = [answer["field"]] if policy == SecretPolicy.REFUSE else [found["field"] for found in answer["redacted"]]
    assert fields == ["items[0].metadata.?.token"], answer
    assert "evil-7f3a" not in json.dumps(answer)
