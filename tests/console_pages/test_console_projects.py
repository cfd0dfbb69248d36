"""Projects: the list and switcher (/projects), create (/projects/new), the overview (/projects/<slug>), and
settings (/projects/<slug>/settings): rename for Owners and Admins, delete with the typed name for Owners."""

import pytest
from django.test import Client

from accounts.models import ApiKey, EndUser, Membership, Project, Role
from tests.console import ROLES, csrf_refused, html, in_role, logged_in


def test_it_lists_and_switches_between_the_persons_projects(alice, project, bob, other_project, charlie):
    Membership.objects.create(user=bob, project=other_project, role=Role.VIEWER)
    page = html(logged_in(bob).get("/projects"))
    assert "Alice Co" in page and "Charlie Co" in page and "Viewer" in page and "Member" in page
    overview = html(logged_in(bob).get(f"/projects/{project.slug}"))
    assert f'href="/projects/{other_project.slug}"' in overview, "the switcher"
    assert 'aria-current="page">Alice Co' in overview
    assert "Charlie Co" not in html(logged_in(alice).get("/projects"))


def test_the_projects_page_needs_a_login(db):
    assert Client().get("/projects")["Location"].startswith("/login?next=/projects")


def test_it_creates_a_project_with_its_creator_as_owner(bob, project):
    response = logged_in(bob).post("/projects/new", {"name": "Bob Labs"})
    created = Project.objects.get(name="Bob Labs")
    assert response["Location"] == f"/projects/{created.slug}"
    assert (
        Membership.objects.get(project=created).user == bob
        and Membership.objects.get(project=created).role == Role.OWNER
    )


def test_it_refuses_an_empty_name(alice):
    assert logged_in(alice).post("/projects/new", {"name": "  "}).status_code == 400


def test_create_is_csrf_protected_and_post_only(alice):
    assert csrf_refused(alice, "/projects/new", {"name": "X"})
    assert logged_in(alice).get("/projects/new").status_code == 405


@pytest.mark.parametrize("role", ROLES)
def test_every_role_sees_the_overview_with_its_own_nav(alice, project, role):
    person = in_role(project, role, alice=alice)
    response = logged_in(person).get(f"/projects/{project.slug}")
    page = html(response)
    assert response.status_code == 200 and '<nav class="project-nav" aria-label="Project">' in page
    assert f'href="/projects/{project.slug}/playground"' in page and f'href="/projects/{project.slug}/mcp"' in page
    assert (f'href="/projects/{project.slug}/keys"' in page) == (role != Role.VIEWER)
    assert (f'href="/projects/{project.slug}/settings"' in page) == (role in (Role.OWNER, Role.ADMIN))
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"] and "no-store" in response["Cache-Control"]


def test_an_outsider_gets_404_for_every_project_page(project, charlie, other_project):
    client = logged_in(charlie)
    for page in ("", "/settings", "/members", "/keys", "/end-users", "/end-users/u_1", "/mcp", "/usage"):
        assert client.get(f"/projects/{project.slug}{page}").status_code == 404, page
        assert client.get(f"/projects/no-such-project{page}").status_code == 404, page
    assert client.get(f"/projects/{other_project.slug}").status_code == 200


def test_project_pages_need_a_login(project):
    for page in ("", "/settings", "/members", "/keys", "/end-users", "/mcp", "/usage"):
        response = Client().get(f"/projects/{project.slug}{page}")
        assert response.status_code == 302 and response["Location"].startswith("/login?next="), page


@pytest.mark.parametrize("role", [Role.OWNER, Role.ADMIN])
def test_owners_and_admins_rename(alice, project, role):
    person = in_role(project, role, alice=alice)
    client = logged_in(person)
    assert client.get(f"/projects/{project.slug}/settings").status_code == 200
    response = client.post(f"/projects/{project.slug}/rename", {"name": "Alice Corp"})
    assert response["Location"] == f"/projects/{project.slug}/settings"
    project.refresh_from_db()
    assert project.name == "Alice Corp" and project.slug == "alice-co"


@pytest.mark.parametrize("role", [Role.MEMBER, Role.VIEWER])
def test_members_and_viewers_cannot_rename_or_delete(alice, project, role):
    client = logged_in(in_role(project, role))
    assert client.get(f"/projects/{project.slug}/settings").status_code == 404
    assert client.post(f"/projects/{project.slug}/rename", {"name": "Hacked"}).status_code == 404
    assert client.post(f"/projects/{project.slug}/delete", {"confirm": "Alice Co"}).status_code == 404
    project.refresh_from_db()
    assert project.name == "Alice Co"


def test_an_outsider_cannot_rename_or_delete(project, charlie):
    client = logged_in(charlie)
    assert client.post(f"/projects/{project.slug}/rename", {"name": "Hacked"}).status_code == 404
    assert client.post(f"/projects/{project.slug}/delete", {"confirm": "Alice Co"}).status_code == 404
    assert Project.objects.filter(pk=project.pk, name="Alice Co").exists()


def test_an_admin_sees_rename_but_not_delete(alice, project):
    client = logged_in(in_role(project, Role.ADMIN))
    page = html(client.get(f"/projects/{project.slug}/settings"))
    assert "Rename" in page and "Delete this project" not in page
    assert client.post(f"/projects/{project.slug}/delete", {"confirm": "Alice Co"}).status_code == 404


def test_the_owner_deletes_with_the_typed_name_and_everything_goes(alice, project, bob, api, other_project):
    api.add({"text": "I live in Lisbon."})
    client = logged_in(alice)
    page = html(client.get(f"/projects/{project.slug}/settings"))
    assert 'data-expected="Alice Co"' in page
    refused = client.post(f"/projects/{project.slug}/delete", {"confirm": "alice co"})
    assert refused.status_code == 400 and "exactly" in html(refused) and Project.objects.filter(pk=project.pk).exists()
    response = client.post(f"/projects/{project.slug}/delete", {"confirm": "Alice Co"})
    assert response["Location"] == "/projects"
    assert not Project.objects.filter(pk=project.pk).exists()
    assert (
        not EndUser.objects.filter(project_id=project.pk).exists()
        and not ApiKey.objects.filter(project_id=project.pk).exists()
    )
    assert not Membership.objects.filter(project_id=project.pk).exists()
    assert api.tool("search", query="Lisbon").status_code == 401, "its keys went with it"
    assert Project.objects.filter(pk=other_project.pk).exists()


def test_rename_and_delete_are_csrf_protected(alice, project):
    assert csrf_refused(alice, f"/projects/{project.slug}/rename", {"name": "X"})
    assert csrf_refused(alice, f"/projects/{project.slug}/delete", {"confirm": "Alice Co"})
    assert Project.objects.filter(pk=project.pk, name="Alice Co").exists()
