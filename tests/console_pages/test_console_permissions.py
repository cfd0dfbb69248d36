"""The one permission table (accounts/permissions.py) and the tenant helper (console/access.py): what each
role may do, and 404 alike for a missing project, another's project and a capability the role lacks."""

import pytest
from django.http import Http404
from django.test import RequestFactory

from accounts.models import Role
from accounts.permissions import CAPABILITIES, can, capabilities_of
from console.access import project_for
from tests.console import in_role

EXPECTED = {
    Role.OWNER: set(CAPABILITIES),
    Role.ADMIN: set(CAPABILITIES) - {"manage_owners", "delete_project"},
    Role.MEMBER: {
        "view_project",
        "view_members",
        "view_keys",
        "manage_keys",
        "view_end_users",
        "view_usage",
        "use_playground",
        "run_write_tools",
        "connect_any_end_user",
        "grant_write",
        "export_memory",
    },
    Role.VIEWER: {"view_project", "view_members", "view_end_users", "view_usage", "use_playground", "export_memory"},
}


@pytest.mark.parametrize("role", list(Role))
def test_it_gives_each_role_exactly_its_capabilities(role):
    assert capabilities_of(role) == EXPECTED[role]


def test_it_gives_nothing_to_no_role():
    assert capabilities_of(None) == frozenset()
    assert not can(None, "view_project")


def test_it_refuses_an_unknown_capability():
    with pytest.raises(KeyError):
        can(Role.OWNER, "fly")


def _request(user):
    request = RequestFactory().get("/")
    request.user = user
    request.session = {}  # type: ignore[assignment]  # a dict stands in for the session the page writes to
    return request


@pytest.mark.parametrize("role", list(Role))
def test_it_returns_the_project_with_the_role(project, alice, role):
    person = in_role(project, role, alice=alice)
    request = _request(person)
    found = project_for(request, project.slug)
    assert found == project and found.role == role and request.membership.role == role
    assert request.session["console_last_project"] == project.slug


def test_it_answers_404_alike_for_missing_not_yours_and_not_allowed(project, alice, charlie, other_project):
    viewer = in_role(project, Role.VIEWER)
    messages = []
    for user, slug, capability in (
        (alice, "no-such-project", "view_project"),
        (charlie, project.slug, "view_project"),
        (viewer, project.slug, "manage_keys"),
    ):
        with pytest.raises(Http404) as refused:
            project_for(_request(user), slug, capability)
        messages.append(str(refused.value))
    assert len(set(messages)) == 1


def test_it_answers_404_to_nobody(project):
    from django.contrib.auth.models import AnonymousUser

    with pytest.raises(Http404):
        project_for(_request(AnonymousUser()), project.slug)
