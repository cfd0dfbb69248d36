"""The end user page's Export (a download, every role) and Import (an upload, Owners and Admins): the same
file as /v1/memory/export, the same checks as /v1/memory/import; 404 for an outsider and a role without it."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from accounts.models import Role
from memory.models import Item, UsageDay
from memory.selectors import scoped
from tests.console import ROLES, csrf_refused, html, in_role, logged_in


def _url(project, account="u_1", tail=""):
    return f"/projects/{project.slug}/end-users/{account}{tail}"


def _items(content: bytes) -> list[dict]:
    return [json.loads(line) for line in content.splitlines()[1:]]


def _upload(data: bytes) -> dict:
    return {"file": SimpleUploadedFile("memory.jsonl", data, content_type="application/x-ndjson")}


@pytest.fixture
def memories(api):
    api.add({"text": "I moved to Berlin in 2021.", "id": "n1"}, {"text": "I prefer green tea.", "id": "n2"})
    api.as_account("customer:42").add({"text": "Order 42 shipped.", "id": "o1"})
    return api


def test_every_role_exports_and_only_owners_and_admins_import(alice, project, memories):
    from_api = b"".join(memories.post("/v1/memory/export").streaming_content)
    for role in ROLES:
        client = logged_in(in_role(project, role, alice=alice))
        page = html(client.get(_url(project)))
        assert "Export" in page and ('enctype="multipart/form-data"' in page) == (role in (Role.OWNER, Role.ADMIN))
        download = client.get(_url(project, tail="/export"))
        assert download.status_code == 200 and "attachment" in download["Content-Disposition"]
        assert _items(download.getvalue()) == _items(from_api), role
        if role in (Role.MEMBER, Role.VIEWER):
            assert client.post(_url(project, "customer:42", "/import"), _upload(from_api)).status_code == 404
    with scoped(project.pk):
        assert not Item.objects.filter(end_user__external_id="customer:42", external_id="n1").exists()


def test_an_owner_imports_a_file_and_the_page_counts_it(alice, project, memories):
    client = logged_in(alice)
    exported = client.get(_url(project, tail="/export")).getvalue()
    bad = exported.replace(b'"kind":"note"', b'"kind":"email"', 1)
    refused = client.post(_url(project, "customer:42", "/import"), _upload(bad), follow=True)
    assert "Nothing was imported: line 2: item.kind" in html(refused)
    response = client.post(_url(project, "customer:42", "/import"), _upload(exported), follow=True)
    page = html(response)
    assert "Imported 2 items (2 added)" in page and "still to be read" in page
    assert "<dt>Items</dt><dd>3</dd>" in page, "the page counts them, read or not yet"
    with scoped(project.pk):
        assert Item.objects.filter(end_user__external_id="customer:42").count() == 3
        counted = {(day.tool, day.surface): day for day in UsageDay.objects.filter(surface="console")}
    assert (counted["memory_import", "console"].requests, counted["memory_import", "console"].errors) == (2, 1)
    assert counted["memory_import", "console"].items_added == 2, "Usage counts the console's imports"
    assert counted["memory_export", "console"].requests == 1


def test_an_outsider_gets_404_and_import_is_csrf_protected(alice, project, memories, charlie):
    client = logged_in(charlie)
    assert client.get(_url(project, tail="/export")).status_code == 404
    assert client.post(_url(project, tail="/import"), _upload(b"{}")).status_code == 404
    assert logged_in(alice).get(_url(project, "nobody", "/export")).status_code == 404
    assert csrf_refused(alice, _url(project, tail="/import"))
