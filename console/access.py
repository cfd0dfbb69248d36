"""The console's one tenant helper: a project the signed-in person may use for one capability, or 404.

Missing, not-yours and not-allowed-for-your-role all answer the same 404 with the same words, so a slug or
a capability cannot be probed. The role's capabilities come from accounts.permissions, the one table.
"""

from typing import Any

from django.http import Http404

from accounts.models import Project
from accounts.permissions import can, capabilities_of
from accounts.selectors import membership_of, memberships_of_user

NOT_FOUND = "Not found."
LAST_PROJECT = "console_last_project"


def project_for(request, slug: str, capability: str = "view_project") -> Project:
    """The project `slug` when the signed-in person is a member whose role has `capability`; else Http404.

    Sets request.membership (the person's Membership) and project.role (their Role value), which the
    console's context processor turns into `project`, `role` and `can` for the templates.
    """
    membership = membership_of(user=request.user, slug=slug)
    if membership is None or not can(membership.role, capability):
        raise Http404(NOT_FOUND)
    project = membership.project
    project.role = membership.role
    request.membership = membership
    if hasattr(request, "session") and request.session.get(LAST_PROJECT) != slug:
        request.session[LAST_PROJECT] = slug  # where the console's home goes next time
    return project


def console(request) -> dict:
    """Template context for every console page: the current project, the person's role and capabilities
    in it, and the projects the switcher lists."""
    context: dict[str, Any] = {}
    membership = getattr(request, "membership", None)
    if membership is not None:
        context.update(
            project=membership.project,
            role=membership.role,
            role_label=membership.get_role_display(),
            can=capabilities_of(membership.role),
        )
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        context["my_memberships"] = lambda: memberships_of_user(user=user)  # evaluated only if a page lists them
    return context
