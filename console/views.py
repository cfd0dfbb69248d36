"""Console pages: accounts (log in and out, password reset, connected apps; sign up is in signup.py), projects (switch,
create, overview, rename, delete) and a project's MCP page.

Views only authenticate, find the project through console.access.project_for (404 for missing, not-yours
and not-allowed alike) and call accounts' selectors and services.
"""

import math
from http import HTTPStatus

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from accounts.connections import (
    connection_of_project,
    connection_of_user,
    connection_revoke,
    connections_of_project,
    connections_of_user,
)
from accounts.consent import ACCESS_LABELS
from accounts.permissions import can
from accounts.ratelimit import CREDENTIAL, END_USER, limits_of
from accounts.registration import client_host
from accounts.resource import MCP_RESOURCE_PATH, mcp_resource_url
from accounts.selectors import membership_of, memberships_of_user
from accounts.selectors import project_overview as overview_counts
from accounts.services import project_create, project_set_rate_limits, project_set_secret_policy
from accounts.services import project_delete as delete_project
from accounts.services import project_rename as rename
from accounts.signin import sign_in_failed, sign_in_wait
from memory.prompts import PROMPTS
from memory.resources import SCHEME, TEMPLATES
from memory.selectors import scoped

from .access import LAST_PROJECT, NOT_FOUND, project_for
from .clients import KEY_PLACEHOLDER, client_configs, python_lines, typescript_lines
from .forms import DeleteProjectForm, ProjectForm, RateLimitsForm, SecretPolicyForm
from .forms_flow import Done, form_post, project_form_post
from .security import console_page

SECONDS_PER_MINUTE = 60


def _safe_next(request, default: str) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return default


# --- Accounts -------------------------------------------------------------------------------------------


@console_page
def home(request):
    """The console's front door: the last project used, else the first, else the projects page."""
    if not request.user.is_authenticated:
        return redirect("console:login")
    last = request.session.get(LAST_PROJECT)
    if last and membership_of(user=request.user, slug=last):
        return redirect("console:project", slug=last)
    memberships = memberships_of_user(user=request.user)
    if memberships:
        return redirect("console:project", slug=memberships[0].project.slug)
    return redirect("console:projects")


@method_decorator(console_page, name="dispatch")
class LoginView(auth_views.LoginView):
    """Email and password; back to `next` (the consent card, for an app signing in) afterwards."""

    template_name = "console/login.html"
    redirect_authenticated_user = True

    def post(self, request, *args, **kwargs):
        wait = sign_in_wait(request)
        if wait is None:
            return super().post(request, *args, **kwargs)
        # Refused before the password is checked, so guessing gets no answer at all.
        form = self.get_form_class()(request, initial={"username": request.POST.get("username", "")})
        minutes = math.ceil(wait / SECONDS_PER_MINUTE)
        refused = (
            f"Too many failed attempts for this account or from this address: try again in {minutes} "
            f"minute{'s' if minutes != 1 else ''}, or reset your password."
        )
        response = self.render_to_response(
            self.get_context_data(form=form, refused=refused), status=HTTPStatus.TOO_MANY_REQUESTS
        )
        response["Retry-After"] = str(wait)
        return response

    def form_invalid(self, form):
        sign_in_failed(self.request)
        return super().form_invalid(form)


@method_decorator(console_page, name="dispatch")
class LogoutView(auth_views.LogoutView):
    """POST only (Django's rule), so a link on another site cannot log the person out."""


@method_decorator(console_page, name="dispatch")
class PasswordResetView(auth_views.PasswordResetView):
    """Mails a one-time link (through the email backend: the console log in development). It answers the
    same whether or not the email has an account, so accounts cannot be probed."""

    template_name = "console/password_reset.html"
    email_template_name = "console/password_reset_email.txt"
    subject_template_name = "console/password_reset_subject.txt"
    success_url = reverse_lazy("console:password-reset-done")


@method_decorator(console_page, name="dispatch")
class PasswordResetDoneView(auth_views.PasswordResetDoneView):
    template_name = "console/password_reset_done.html"


@method_decorator(console_page, name="dispatch")
class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """The mailed link: choosing a new password signs the person in at once, past the sign-in limits, so
    wrong passwords sent by someone else can never lock the account's owner out."""

    template_name = "console/password_reset_confirm.html"
    success_url = reverse_lazy("console:password-reset-complete")
    post_reset_login = True
    post_reset_login_backend = "django.contrib.auth.backends.ModelBackend"


@method_decorator(console_page, name="dispatch")
class PasswordResetCompleteView(auth_views.PasswordResetCompleteView):
    template_name = "console/password_reset_complete.html"


def _rows(connections, disconnect_url):
    return [
        {
            "connection": c,
            "access_label": ACCESS_LABELS[c.access],
            "disconnect_url": disconnect_url(c),
            "app_host": client_host(c.application),
        }
        for c in connections
    ]


@console_page
@login_required
def account_apps(request):
    """Account > Connected apps: every app this person connected, with Disconnect."""
    rows = _rows(
        connections_of_user(user=request.user), lambda c: reverse("console:account-app-disconnect", kwargs={"pk": c.pk})
    )
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


# --- Projects -------------------------------------------------------------------------------------------


@console_page
@login_required
def projects(request):
    """Every project the person belongs to, with their role, and a form to create one."""
    return render(
        request, "console/projects.html", {"memberships": memberships_of_user(user=request.user), "form": ProjectForm()}
    )


@console_page
@require_POST
@login_required
def project_new(request):
    """Create a project; its creator is its Owner."""
    return form_post(
        request,
        ProjectForm,
        act=lambda data: _created(request, data),
        page=lambda form: render(
            request, "console/projects.html", {"memberships": memberships_of_user(user=request.user), "form": form}
        ),
    )


def _created(request, data: dict) -> Done:
    project = project_create(name=data["name"].strip(), owner=request.user)
    return Done(f"Created {project.name}.", reverse("console:project", kwargs={"slug": project.slug}))


@console_page
@login_required
def project_overview(request, slug: str):
    """A project's front page: counts and where to go next."""
    project = project_for(request, slug)
    return render(
        request,
        "console/project_overview.html",
        {"project": project, "counts": overview_counts(project=project), "mcp_url": mcp_resource_url(request)},
    )


def _settings_page(request, project, *, rename_form=None, limits_form=None, secrets_form=None, delete_form=None):
    limits = limits_of(project)
    return render(
        request,
        "console/project_settings.html",
        {
            "project": project,
            "rename_form": rename_form or ProjectForm(initial={"name": project.name}),
            "limits_form": limits_form
            or RateLimitsForm(
                initial={
                    "per_credential": project.rate_limit_per_credential,
                    "per_end_user": project.rate_limit_per_end_user,
                }
            ),
            "limits": {"per_credential": limits[CREDENTIAL], "per_end_user": limits[END_USER]},
            "default_limits": {
                "per_credential": settings.RATE_LIMIT_PER_CREDENTIAL,
                "per_end_user": settings.RATE_LIMIT_PER_END_USER,
            },
            "secrets_form": secrets_form or SecretPolicyForm(initial={"policy": project.secret_policy}),
            "delete_form": delete_form or DeleteProjectForm(),
        },
    )


def _settings_url(project) -> str:
    return reverse("console:project-settings", kwargs={"slug": project.slug})


@console_page
@login_required
def project_settings(request, slug: str):
    """Rename, set the rate limits and what memory does with secrets (Owners, Admins); delete (Owners)."""
    return _settings_page(request, project_for(request, slug, "rename_project"))


@console_page
@require_POST
@login_required
def project_limits(request, slug: str):
    """Set the project's rate limits; an empty field goes back to the service's default."""
    return project_form_post(
        request,
        slug,
        "manage_limits",
        RateLimitsForm,
        act=_set_limits,
        page=lambda project, form: _settings_page(request, project, limits_form=form),
    )


def _set_limits(project, data: dict) -> Done:
    project_set_rate_limits(project=project, per_credential=data["per_credential"], per_end_user=data["per_end_user"])
    limits = limits_of(project)
    return Done(
        f"Rate limits set: {limits[CREDENTIAL]:,} requests a minute per key or app, "
        f"{limits[END_USER]:,} per key or app and end user.",
        _settings_url(project),
    )


@console_page
@require_POST
@login_required
def project_secrets(request, slug: str):
    """Refuse items holding a secret (the default), or store them with each secret redacted."""
    return project_form_post(
        request,
        slug,
        "set_secret_policy",
        SecretPolicyForm,
        act=_set_secret_policy,
        page=lambda project, form: _settings_page(request, project, secrets_form=form),
    )


def _set_secret_policy(project, data: dict) -> Done:
    project_set_secret_policy(project=project, policy=data["policy"])
    return Done(f"Items holding a secret: {project.get_secret_policy_display().lower()}.", _settings_url(project))


@console_page
@require_POST
@login_required
def project_rename(request, slug: str):
    return project_form_post(
        request,
        slug,
        "rename_project",
        ProjectForm,
        act=_rename,
        page=lambda project, form: _settings_page(request, project, rename_form=form),
        refused_field="name",
    )


def _rename(project, data: dict) -> Done:
    rename(project=project, name=data["name"])
    return Done(f"Renamed the project to {project.name}.", _settings_url(project))


@console_page
@require_POST
@login_required
def project_delete(request, slug: str):
    """Delete the project and everything of it, once its name is typed."""
    return project_form_post(
        request,
        slug,
        "delete_project",
        DeleteProjectForm,
        act=lambda project, data: _delete(request, project, data),
        page=lambda project, form: _settings_page(request, project, delete_form=form),
        refused_field="confirm",
    )


def _delete(request, project, data: dict) -> Done:
    with scoped(project.pk):  # its end users' memory goes with it, and row-level security shows it
        delete_project(project=project, confirmation=data["confirm"])
    request.session.pop(LAST_PROJECT, None)
    return Done(f"Deleted {project.name} and everything in it.", reverse("console:projects"))


# --- MCP ------------------------------------------------------------------------------------------------


@console_page
@login_required
def project_mcp(request, slug: str):
    """How to connect each MCP client (everyone in the project), and for Owners and Admins every OAuth
    connection of the project, with Disconnect."""
    project = project_for(request, slug)
    mcp_url = mcp_resource_url(request)
    context = {"project": project, "mcp_url": mcp_url, "clients": client_configs(mcp_url), "rows": None}
    base_url = mcp_url.rsplit(MCP_RESOURCE_PATH, 1)[0]
    context.update(
        python=python_lines(base_url, key=KEY_PLACEHOLDER), typescript=typescript_lines(base_url, key=KEY_PLACEHOLDER)
    )
    context.update(prompts=PROMPTS, resource_scheme=SCHEME, resource_templates=TEMPLATES)
    if can(project.role, "view_connections"):
        context["rows"] = _rows(
            connections_of_project(project=project),
            lambda c: reverse("console:project-mcp-disconnect", kwargs={"slug": project.slug, "pk": c.pk}),
        )
    return render(request, "console/project_mcp.html", context)


@console_page
@require_POST
@login_required
def project_mcp_disconnect(request, slug: str, pk: int):
    project = project_for(request, slug, "view_connections")
    connection = connection_of_project(project=project, pk=pk)
    if connection is None:
        raise Http404(NOT_FOUND)
    connection_revoke(connection=connection)
    messages.success(request, f"Disconnected {connection.application.name or 'the app'} of {connection.user.email}.")
    return redirect("console:project-mcp", slug=project.slug)
