"""End users (/projects/<slug>/end-users): the list with counts, last activity and search; one end user's
memory (files as memory_ls/memory_read see them, passages by thread, the written index, subjects and their
history); forget one item or the whole end user, for Owners and Admins only."""

import pytest
from django.test import Client

from accounts.models import EndUser, Role
from memory.models import Item
from memory.selectors import scoped
from tests.console import ROLES, csrf_refused, html, in_role, logged_in


def _url(project, tail=""):
    return f"/projects/{project.slug}/end-users{tail}"


@pytest.fixture
def memories(api):
    api.add({"text": "I moved to Berlin in 2021. I work at Acme as an engineer.", "id": "n1", "kind": "note"})
    api.add({"text": "Remember that I prefer green tea.", "id": "n2", "kind": "note", "session": "s1"})
    api.as_account("customer:42").add({"text": "Order 42 shipped.", "id": "o1"})
    return api


@pytest.mark.parametrize("role", ROLES)
def test_everyone_in_the_project_sees_the_end_users(alice, project, memories, role):
    response = logged_in(in_role(project, role, alice=alice)).get(_url(project))
    page = html(response)
    assert response.status_code == 200 and "u_1" in page and "customer:42" in page and "2 end users" in page
    for heading in ("End user", "Items", "Passages", "Last activity"):
        assert heading in page
    row = page.split("<code>u_1</code>", 1)[1].split("</tr>", 1)[0]
    assert '<td class="num">2</td>' in row


def test_it_searches(alice, project, memories):
    page = html(logged_in(alice).get(_url(project), {"q": "customer"}))
    assert "customer:42" in page and "<code>u_1</code>" not in page and "1 end user matching" in page


def test_it_needs_a_login_and_an_outsider_gets_404(project, memories, charlie, other_project):
    assert Client().get(_url(project)).status_code == 302
    client = logged_in(charlie)
    assert client.get(_url(project)).status_code == 404
    assert client.get(_url(project, "/u_1")).status_code == 404
    assert client.get(f"/projects/{other_project.slug}/end-users/u_1").status_code == 404, (
        "the same end user id in one's own project is another end user (none there)"
    )


@pytest.mark.parametrize("role", ROLES)
def test_every_role_reads_one_end_users_memory(alice, project, memories, role):
    client = logged_in(in_role(project, role, alice=alice))
    files = html(client.get(_url(project, "/u_1")))
    assert "index.md" in files and "passages/" in files and "subjects/" in files
    passages_dir = html(client.get(_url(project, "/u_1"), {"tab": "files", "path": "passages/memory/notes/"}))
    assert "th_" in passages_dir
    threads = html(client.get(_url(project, "/u_1"), {"tab": "threads"}))
    assert "green tea" in threads or "Berlin" in threads
    assert "Order 42" not in threads, "another end user's memory"
    index = client.get(_url(project, "/u_1"), {"tab": "index"})
    assert index.status_code == 200 and "Written index" in html(index)
    subjects = html(client.get(_url(project, "/u_1"), {"tab": "subjects", "subject": "u_1"}))
    assert "home_city" in subjects and "Berlin" in subjects and 'class="timeline"' in subjects
    assert ("Forget" in threads) == (role in (Role.OWNER, Role.ADMIN))


def test_a_file_reads_as_memory_read_answers(alice, project, memories):
    client = logged_in(alice)
    page = html(client.get(_url(project, "/u_1"), {"tab": "files", "path": "subjects/u_1.md"}))
    assert "# u_1" in page and "## History" in page
    missing = html(client.get(_url(project, "/u_1"), {"tab": "files", "path": "passages/nope/"}))
    assert "No directory" in missing


def test_an_unknown_end_user_is_404(alice, project, memories):
    assert logged_in(alice).get(_url(project, "/nobody")).status_code == 404


@pytest.mark.parametrize("role", [Role.OWNER, Role.ADMIN])
def test_owners_and_admins_forget_one_item(alice, project, memories, role):
    client = logged_in(in_role(project, role, alice=alice))
    confirm = client.get(_url(project, "/u_1/forget"), {"item": "n2"})
    assert confirm.status_code == 200 and "Forget item" in html(confirm) and "green tea" in html(confirm)
    with scoped(project.pk):
        assert Item.objects.filter(external_id="n2").exists(), "asking is not forgetting"
    response = client.post(_url(project, "/u_1/forget"), {"item": "n2"})
    assert response["Location"] == _url(project, "/u_1")
    with scoped(project.pk):
        assert not Item.objects.filter(external_id="n2").exists() and Item.objects.filter(external_id="n1").exists()
    assert memories.tool("grep", pattern="green tea").json()["found"] == 0


@pytest.mark.parametrize("role", [Role.OWNER, Role.ADMIN])
def test_owners_and_admins_forget_a_whole_end_user_with_its_id_typed(alice, project, memories, role):
    client = logged_in(in_role(project, role, alice=alice))
    assert "Type the end user" in html(client.get(_url(project, "/u_1/forget"), {"all": "1"}))
    client.post(_url(project, "/u_1/forget"), {"everything": "on", "confirm": "u_2"})
    assert EndUser.objects.filter(external_id="u_1").exists()
    response = client.post(_url(project, "/u_1/forget"), {"everything": "on", "confirm": "u_1"})
    assert response["Location"] == _url(project)
    assert not EndUser.objects.filter(external_id="u_1").exists()
    assert EndUser.objects.filter(external_id="customer:42").exists()


@pytest.mark.parametrize("role", [Role.MEMBER, Role.VIEWER])
def test_members_and_viewers_cannot_forget(alice, project, memories, role):
    client = logged_in(in_role(project, role))
    assert client.get(_url(project, "/u_1/forget"), {"item": "n1"}).status_code == 404
    assert client.post(_url(project, "/u_1/forget"), {"item": "n1"}).status_code == 404
    assert client.post(_url(project, "/u_1/forget"), {"everything": "on", "confirm": "u_1"}).status_code == 404
    with scoped(project.pk):
        assert Item.objects.filter(external_id="n1").exists()


def test_an_outsider_cannot_forget(project, memories, charlie, other_project):
    client = logged_in(charlie)
    assert client.post(_url(project, "/u_1/forget"), {"everything": "on", "confirm": "u_1"}).status_code == 404
    assert (
        client.post(
            f"/projects/{other_project.slug}/end-users/u_1/forget", {"everything": "on", "confirm": "u_1"}
        ).status_code
        == 404
    )
    assert EndUser.objects.filter(external_id="u_1", project=project).exists()


def test_forgetting_an_unknown_item_is_404(alice, project, memories):
    client = logged_in(alice)
    assert client.get(_url(project, "/u_1/forget"), {"item": "o1"}).status_code == 404, "another end user's item"
    assert client.post(_url(project, "/u_1/forget"), {"item": "o1"}).status_code == 404
    with scoped(project.pk):
        assert Item.objects.filter(external_id="o1").exists()


def test_forget_is_csrf_protected(alice, project, memories):
    assert csrf_refused(alice, _url(project, "/u_1/forget"), {"item": "n1"})
    assert csrf_refused(alice, _url(project, "/u_1/forget"), {"everything": "on", "confirm": "u_1"})
    with scoped(project.pk):
        assert Item.objects.filter(external_id="n1").exists()
