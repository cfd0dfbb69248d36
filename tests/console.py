"""Helpers for the console's page tests: a logged-in browser, a person in each role, CSRF-enforcing clients.

Alice owns "Alice Co", Bob is its Member, Charlie an outsider with "Charlie Co" (tests/conftest.py); Erin
(Admin) and Vera (Viewer) join Alice Co here when a test asks for a role.
"""

from django.test import Client

from accounts.models import Membership, Role
from tests.conftest import make_user

ROLES = (Role.OWNER, Role.ADMIN, Role.MEMBER, Role.VIEWER)
EXTRA: dict[str, str] = {Role.ADMIN: "erin", Role.VIEWER: "vera", Role.MEMBER: "bob", Role.OWNER: "olga"}


def logged_in(user, *, csrf: bool = False) -> Client:
    """A browser logged in as `user`; with `csrf`, it enforces CSRF as a real browser's requests meet it."""
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


def in_role(project, role: str, *, alice=None):
    """A person with `role` in `project`: Alice herself for Owner (when given), else a new member."""
    if role == Role.OWNER and alice is not None:
        return alice
    existing = Membership.objects.filter(project=project, user__email=f"{EXTRA[role]}@example.com").first()
    if existing:
        return existing.user
    user = make_user(EXTRA[role])
    Membership.objects.create(user=user, project=project, role=role)
    return user


def html(response) -> str:
    return response.content.decode()


def csrf_refused(user, path: str, data: dict | None = None) -> bool:
    """A POST without the CSRF token is refused with 403 (Django's middleware; no console view is exempt)."""
    return logged_in(user, csrf=True).post(path, data or {}).status_code == 403
