"""Members and roles: the list (everyone in the project), invitations by email, role changes and removal
(Owners and Admins; only an Owner touches the Owner role), and the invitation link itself."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts.models import Role
from accounts.permissions import can
from accounts.selectors import (
    invitation_by_token,
    invitation_of_project,
    invitations_open,
    members_of_project,
    membership_of_project,
)
from accounts.services import (
    INVITATION_DAYS,
    AccountsError,
    invitation_accept,
    invitation_create,
    invitation_send,
    membership_change_role,
    membership_remove,
)
from accounts.services import invitation_revoke as revoke_invitation

from .access import NOT_FOUND, project_for
from .forms import InviteForm, RoleForm
from .forms_flow import Done, project_form_post
from .security import console_page


def _grantable_roles(actor_role: str) -> list[tuple[str, str]]:
    """The roles this person may give: all of them for an Owner, all but Owner for an Admin."""
    return [(value, label) for value, label in Role.choices if value != Role.OWNER or can(actor_role, "manage_owners")]


def _page(request, project, *, invite_form=None):
    actor = project.role
    rows = []
    for membership in members_of_project(project=project):
        touchable = can(actor, "manage_members") and (membership.role != Role.OWNER or can(actor, "manage_owners"))
        rows.append({"membership": membership, "editable": touchable, "is_me": membership.user_id == request.user.pk})
    context = {
        "project": project,
        "rows": rows,
        "roles": _grantable_roles(actor),
        "invitations": invitations_open(project=project) if can(actor, "manage_members") else [],
        "invite_form": invite_form or InviteForm(),
        "invitation_days": INVITATION_DAYS,
    }
    return render(request, "console/members.html", context)


@console_page
@login_required
def members(request, slug: str):
    """Everyone in the project with their role; Viewers and Members see the list, nothing more."""
    return _page(request, project_for(request, slug, "view_members"))


@console_page
@require_POST
@login_required
def invite(request, slug: str):
    """Invite by email: an invitation link goes out through the email backend."""
    return project_form_post(
        request,
        slug,
        "manage_members",
        InviteForm,
        act=lambda project, data: _invite(request, project, data),
        page=lambda project, form: _page(request, project, invite_form=form),
        refused_field=lambda refused: "email" if "member" in str(refused) else "role",
    )


def _invite(request, project, data: dict) -> Done:
    invitation, token = invitation_create(
        project=project, email=data["email"], role=data["role"], invited_by=request.user, actor_role=project.role
    )
    link = request.build_absolute_uri(reverse("console:invitation", kwargs={"token": token}))
    invitation_send(invitation=invitation, link=link)
    return Done(
        f"Invited {invitation.email} as {invitation.get_role_display()}: the link is on its way.",
        reverse("console:members", kwargs={"slug": project.slug}),
    )


def _member(project, pk: int):
    membership = membership_of_project(project=project, pk=pk)
    if membership is None:
        raise Http404(NOT_FOUND)
    return membership


@console_page
@require_POST
@login_required
def change_role(request, slug: str, pk: int):
    project = project_for(request, slug, "manage_members")
    membership = _member(project, pk)
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose Owner, Admin, Member or Viewer.")
    else:
        try:
            membership_change_role(membership=membership, role=form.cleaned_data["role"], actor_role=project.role)
        except AccountsError as refused:
            messages.error(request, str(refused))
        else:
            messages.success(request, f"{membership.user.email} is now {membership.get_role_display()}.")
    if membership.user_id == request.user.pk and not can(membership.role, "view_members"):
        return redirect("console:home")
    return redirect("console:members", slug=project.slug)


@console_page
@login_required
def remove(request, slug: str, pk: int):
    """GET: the confirmation. POST: take the person off the project (their connections to it end)."""
    project = project_for(request, slug, "manage_members")
    membership = _member(project, pk)
    if request.method != "POST":
        return render(request, "console/member_remove.html", {"project": project, "membership": membership})
    try:
        membership_remove(membership=membership, actor_role=project.role)
    except AccountsError as refused:
        messages.error(request, str(refused))
        return redirect("console:members", slug=project.slug)
    messages.success(request, f"Removed {membership.user.email} from {project.name}.")
    if membership.user_id == request.user.pk:
        return redirect("console:projects")
    return redirect("console:members", slug=project.slug)


@console_page
@require_POST
@login_required
def invitation_revoke(request, slug: str, pk: int):
    project = project_for(request, slug, "manage_members")
    found = invitation_of_project(project=project, pk=pk)
    if found is None:
        raise Http404(NOT_FOUND)
    revoke_invitation(invitation=found)
    messages.success(request, f"Withdrew the invitation to {found.email}.")
    return redirect("console:members", slug=project.slug)


@console_page
def invitation(request, token: str):
    """The link in the mail. Signed out: log in or sign up (with that email) first. Signed in: Accept (POST).

    An unknown, used, withdrawn or expired token all answer the same 404."""
    found = invitation_by_token(token=token)
    if found is None:
        raise Http404(NOT_FOUND)
    here = reverse("console:invitation", kwargs={"token": token})
    if request.method == "POST":
        if not request.user.is_authenticated:
            return redirect(f"{reverse('console:login')}?next={here}")
        try:
            membership = invitation_accept(invitation=found, user=request.user)
        except AccountsError as refused:
            messages.error(request, str(refused))
            return redirect(here)
        messages.success(request, f"You joined {membership.project.name} as {membership.get_role_display()}.")
        return redirect("console:project", slug=membership.project.slug)
    return render(
        request,
        "console/invitation.html",
        {
            "invitation": found,
            "here": here,
            "wrong_account": request.user.is_authenticated and request.user.email.lower() != found.email.lower(),
        },
    )
