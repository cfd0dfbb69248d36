"""Console pages: log in and out, Account > Connected apps, and a project's MCP page.

Views only authenticate, look up through accounts' selectors and call its services. A connection or a
project that is missing and one that is not the person's answer the same 404.
"""

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views.decorators.http import require_POST

from accounts.oauth import (
    ACCESS_LABELS, connection_of_project, connection_of_user, connection_revoke, connections_of_project,
    connections_of_user, mcp_resource_url, project_for_connection_admin,
)

from .security import console_page

NOT_FOUND = "Not found."


@method_decorator(console_page, name="dispatch")
class LoginView(auth_views.LoginView):
    """Email and password; back to `next` (the consent card, for an app signing in) afterwards."""

    template_name = "console/login.html"
    redirect_authenticated_user = True


@method_decorator(console_page, name="dispatch")
class LogoutView(auth_views.LogoutView):
    """POST only (Django's rule), so a link on another site cannot log the person out."""


def _rows(connections, disconnect_url):
    return [{"connection": c, "access_label": ACCESS_LABELS[c.access], "disconnect_url": disconnect_url(c)}
            for c in connections]


@console_page
@login_required
def account_apps(request):
    """Account > Connected apps: every app this person connected, with Disconnect."""
    rows = _rows(connections_of_user(user=request.user),
                 lambda c: reverse("console:account-app-disconnect", kwargs={"pk": c.pk}))
    return render(request, "console/account_apps.html", {"rows": rows})


@console_page
@require_POST
@login_required
def account_app_disconnect(request, pk: int):
    connection = connection_of_user(user=request.user, pk=pk)
    if connection is None:
        raise Http404(NOT_FOUND)
    connection_revoke(connection=connection)
    messages.success(request, f"Disconnected {connection.application.name or 'the app'}: it must sign in again.")
    return redirect("console:account-apps")


def _administered_project(request, slug: str):
    project = project_for_connection_admin(user=request.user, slug=slug)
    if project is None:
        raise Http404(NOT_FOUND)
    return project


@console_page
@login_required
def project_mcp(request, slug: str):
    """A project's MCP page, for Owners and Admins: the URL to paste, and every connection, with Disconnect."""
    project = _administered_project(request, slug)
    return render(request, "console/project_mcp.html", {
        "project": project, "mcp_url": mcp_resource_url(request),
        "rows": _rows(connections_of_project(project=project), lambda c: reverse(
            "console:project-mcp-disconnect", kwargs={"slug": project.slug, "pk": c.pk})),
    })


@console_page
@require_POST
@login_required
def project_mcp_disconnect(request, slug: str, pk: int):
    project = _administered_project(request, slug)
    connection = connection_of_project(project=project, pk=pk)
    if connection is None:
        raise Http404(NOT_FOUND)
    connection_revoke(connection=connection)
    messages.success(request, f"Disconnected {connection.application.name or 'the app'} of {connection.user.email}.")
    return redirect("console:project-mcp", slug=project.slug)
