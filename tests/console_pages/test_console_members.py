"""Members and roles (/projects/<slug>/members): the list for everyone in the project; invite by email, change
roles and remove for Owners and Admins (only an Owner touches the Owner role); a project always keeps an Owner;
the invitation link (/invitations/<token>)."""

import pytest
from django.core import mail
from django.test import Client

from accounts.models import Invitation, Membership, Role
from tests.conftest import first_group
from tests.console import ROLES, csrf_refused, html, in_role, logged_in
from tests.oauth_flow import connect


def _url(project, tail=""):
    return f"/projects/{project.slug}/members{tail}"


@pytest.mark.parametrize("role", ROLES)
def test_everyone_in_the_project_sees_the_list(alice, project, bob, role):
    response = logged_in(in_role(project, role, alice=alice)).get(_url(project))
    page = html(response)
    assert response.status_code == 200 and "alice@example.com" in page and "bob@example.com" in page
    manages = role in (Role.OWNER, Role.ADMIN)
    assert ("Invite someone" in page) == manages and ('name="role"' in page) == manages
    assert ("/remove" in page) == manages


def test_the_list_needs_a_login_and_an_outsider_gets_404(project, charlie):
    assert Client().get(_url(project)).status_code == 302
    assert logged_in(charlie).get(_url(project)).status_code == 404


def _invite(client, project, email="dana@example.com", role=Role.MEMBER):
    return client.post(_url(project, "/invite"), {"email": email, "role": role})


def _link():
    return first_group(r"http://testserver(/invitations/\S+)", mail.outbox[-1].body)


@pytest.mark.parametrize("role", [Role.OWNER, Role.ADMIN])
def test_owners_and_admins_invite_by_email(alice, project, role):
    response = _invite(logged_in(in_role(project, role, alice=alice)), project, role=Role.VIEWER)
    assert response["Location"] == _url(project)
    assert mail.outbox[-1].to == ["dana@example.com"] and "Alice Co" in mail.outbox[-1].subject
    invitation = Invitation.objects.get(email="dana@example.com")
    assert invitation.role == Role.VIEWER and _link().split("/")[-1] not in invitation.token_hash, "hashed"


@pytest.mark.parametrize("role", [Role.MEMBER, Role.VIEWER])
def test_members_and_viewers_cannot_invite(project, role):
    assert _invite(logged_in(in_role(project, role)), project).status_code == 404
    assert not Invitation.objects.exists() and not mail.outbox


def test_an_outsider_cannot_invite(project, charlie):
    assert _invite(logged_in(charlie), project).status_code == 404 and not Invitation.objects.exists()


def test_an_admin_cannot_invite_an_owner(project):
    response = _invite(logged_in(in_role(project, Role.ADMIN)), project, role=Role.OWNER)
    assert response.status_code == 400 and "Only an Owner" in html(response) and not Invitation.objects.exists()


def test_inviting_a_member_again_is_refused(alice, project, bob):
    response = _invite(logged_in(alice), project, email="bob@example.com")
    assert response.status_code == 400 and "already a member" in html(response)


def test_a_new_person_signs_up_from_the_link_and_joins(alice, project):
    _invite(logged_in(alice), project, role=Role.ADMIN)
    link = _link()
    visitor = Client()
    page = html(visitor.get(link))
    assert "Join Alice Co" in page and "dana%40example.com" in page
    visitor.post("/signup", {"email": "dana@example.com", "password": "a-long-pass-9", "next": link})
    finish = first_group(r"http://testserver(/signup/\S+)", mail.outbox[-1].body)
    assert visitor.post(finish)["Location"] == link
    response = visitor.post(link)
    assert response["Location"] == f"/projects/{project.slug}"
    assert Membership.objects.get(user__email="dana@example.com", project=project).role == Role.ADMIN
    assert visitor.get(link).status_code == 404, "the link works once"


def test_a_signed_in_person_accepts(alice, project, charlie):
    _invite(logged_in(alice), project, email="charlie@example.com", role=Role.VIEWER)
    client = logged_in(charlie)
    assert "Accept and join" in html(client.get(_link()))
    client.post(_link())
    assert Membership.objects.get(user=charlie, project=project).role == Role.VIEWER


def test_the_invitation_is_for_its_email_only(alice, project, charlie):
    _invite(logged_in(alice), project)
    client = logged_in(charlie)
    assert "This invitation is for dana@example.com" in html(client.get(_link()))
    client.post(_link())
    assert not Membership.objects.filter(user=charlie, project=project).exists()


def test_an_unknown_or_withdrawn_invitation_is_404(alice, project):
    assert Client().get("/invitations/not-a-token").status_code == 404
    _invite(logged_in(alice), project)
    invitation = Invitation.objects.get()
    assert "dana@example.com" in html(logged_in(alice).get(_url(project)))
    logged_in(alice).post(f"/projects/{project.slug}/invitations/{invitation.pk}/revoke")
    assert Client().get(_link()).status_code == 404


def test_accepting_is_csrf_protected(alice, project, charlie):
    _invite(logged_in(alice), project, email="charlie@example.com")
    assert csrf_refused(charlie, _link())
    assert not Membership.objects.filter(user=charlie, project=project).exists()


def _set_role(client, project, membership, role):
    return client.post(_url(project, f"/{membership.pk}/role"), {"role": role})


@pytest.mark.parametrize("role", [Role.OWNER, Role.ADMIN])
def test_owners_and_admins_change_roles(alice, project, bob, role):
    client = logged_in(in_role(project, role, alice=alice))
    bob_membership = Membership.objects.get(user=bob)
    assert _set_role(client, project, bob_membership, Role.VIEWER)["Location"] == _url(project)
    bob_membership.refresh_from_db()
    assert bob_membership.role == Role.VIEWER


@pytest.mark.parametrize("role", [Role.MEMBER, Role.VIEWER])
def test_members_and_viewers_cannot_change_roles_or_remove(alice, project, role):
    client = logged_in(in_role(project, role))
    alice_membership = Membership.objects.get(user=alice)
    assert _set_role(client, project, alice_membership, Role.VIEWER).status_code == 404
    assert client.post(_url(project, f"/{alice_membership.pk}/remove")).status_code == 404
    alice_membership.refresh_from_db()
    assert alice_membership.role == Role.OWNER


def test_an_outsider_cannot_change_roles_or_remove(alice, project, bob, charlie, other_project):
    bob_membership = Membership.objects.get(user=bob)
    client = logged_in(charlie)
    assert _set_role(client, project, bob_membership, Role.OWNER).status_code == 404
    assert (
        client.post(f"/projects/{other_project.slug}/members/{bob_membership.pk}/role", {"role": "owner"}).status_code
        == 404
    )
    assert client.post(f"/projects/{other_project.slug}/members/{bob_membership.pk}/remove").status_code == 404
    bob_membership.refresh_from_db()
    assert bob_membership.role == Role.MEMBER


def test_an_admin_cannot_touch_the_owner_role(alice, project, bob):
    client = logged_in(in_role(project, Role.ADMIN))
    _set_role(client, project, Membership.objects.get(user=bob), Role.OWNER)
    _set_role(client, project, Membership.objects.get(user=alice), Role.MEMBER)
    client.post(_url(project, f"/{Membership.objects.get(user=alice).pk}/remove"))
    assert (
        Membership.objects.get(user=bob).role == Role.MEMBER and Membership.objects.get(user=alice).role == Role.OWNER
    )


def test_a_project_always_keeps_an_owner(alice, project, bob):
    client = logged_in(alice)
    mine = Membership.objects.get(user=alice)
    _set_role(client, project, mine, Role.ADMIN)
    assert "always keeps an Owner" in html(client.get(_url(project)))
    client.post(_url(project, f"/{mine.pk}/remove"))
    assert Membership.objects.get(user=alice).role == Role.OWNER
    _set_role(client, project, Membership.objects.get(user=bob), Role.OWNER)
    _set_role(client, project, mine, Role.VIEWER)
    assert Membership.objects.get(user=alice).role == Role.VIEWER, "with another Owner, the first may step down"


def test_remove_asks_first_then_ends_the_persons_access_and_connections(alice, project, bob):
    tokens = connect(bob)
    client = logged_in(alice)
    membership = Membership.objects.get(user=bob)
    confirm = client.get(_url(project, f"/{membership.pk}/remove"))
    assert confirm.status_code == 200 and "Remove bob@example.com?" in html(confirm)
    assert Membership.objects.filter(user=bob).exists()
    assert client.post(_url(project, f"/{membership.pk}/remove"))["Location"] == _url(project)
    assert not Membership.objects.filter(user=bob).exists()
    assert logged_in(bob).get(f"/projects/{project.slug}").status_code == 404
    from tests.conftest import Api

    assert Api(tokens["access_token"], None).mcp("ping").status_code == 401


def test_member_forms_are_csrf_protected(alice, project, bob):
    membership = Membership.objects.get(user=bob)
    assert csrf_refused(alice, _url(project, "/invite"), {"email": "d@example.com", "role": "member"})
    assert csrf_refused(alice, _url(project, f"/{membership.pk}/role"), {"role": "viewer"})
    assert csrf_refused(alice, _url(project, f"/{membership.pk}/remove"))
    membership.refresh_from_db()
    assert membership.role == Role.MEMBER and not Invitation.objects.exists()
