"""Reads on accounts for the console: a person's projects and role, members, invitations, keys, end users.

Everything that belongs to a project is looked up through that project, so an id from another project is
simply not found.
"""

from datetime import timedelta

from django.db.models import F, QuerySet
from django.utils import timezone

from .models import ApiKey, EndUser, Invitation, Membership, Project, Role, User
from .services import hash_key

END_USERS_PAGE = 50
ACTIVE_DAYS = 7  # an end user is "active" on the Overview when memory was used for them this recently

# Order of importance, for listing members: the order Role lists them (Owner first).
ROLE_ORDER: dict[str, int] = {role: rank for rank, role in enumerate(Role)}


def membership_of(*, user: User, slug: str) -> Membership | None:
    """The person's membership of the project `slug`; None for a missing project and for one not theirs."""
    if not getattr(user, "is_authenticated", False):
        return None
    return Membership.objects.filter(user=user, project__slug=slug).select_related("project").first()


def memberships_of_user(*, user: User) -> list[Membership]:
    """Every project the person belongs to, by name: what the project switcher lists."""
    return list(Membership.objects.filter(user=user).select_related("project").order_by("project__name", "pk"))


def members_of_project(*, project: Project) -> list[Membership]:
    """The project's members, Owners first, then by email."""
    members = Membership.objects.filter(project=project).select_related("user")
    return sorted(members, key=lambda m: (ROLE_ORDER.get(m.role, len(ROLE_ORDER)), m.user.email))


def membership_of_project(*, project: Project, pk: int) -> Membership | None:
    return Membership.objects.filter(project=project, pk=pk).select_related("user").first()


def invitations_open(*, project: Project) -> QuerySet[Invitation]:
    """Invitations not yet accepted, revoked or expired, newest first."""
    return (
        Invitation.objects.filter(
            project=project, accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now()
        )
        .select_related("invited_by")
        .order_by("-created_at")
    )


def invitation_of_project(*, project: Project, pk: int) -> Invitation | None:
    return invitations_open(project=project).filter(pk=pk).first()


def invitation_by_token(*, token: str) -> Invitation | None:
    """An open invitation by its raw token; None for an unknown, used, revoked or expired one (all alike)."""
    return (
        Invitation.objects.filter(
            token_hash=hash_key(token), accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now()
        )
        .select_related("project", "invited_by")
        .first()
    )


def api_keys_of_project(*, project: Project) -> QuerySet[ApiKey]:
    """The project's live keys, newest first (revoked keys are gone from the console)."""
    return (
        ApiKey.objects.filter(project=project, revoked_at__isnull=True)
        .select_related("created_by")
        .order_by("-created_at", "-pk")
    )


def api_key_of_project(*, project: Project, pk: int) -> ApiKey | None:
    return api_keys_of_project(project=project).filter(pk=pk).first()


def end_users_of_project(*, project: Project, search: str = "", limit: int = END_USERS_PAGE) -> list[EndUser]:
    """The project's end users by last activity, most recent first; each row carries `last_at`. How much
    memory each holds is memory's to count (memory.selectors.sizes_of_end_users).

    `search` matches part of the end user's id.
    """
    rows = EndUser.objects.filter(project=project)
    if search:
        rows = rows.filter(external_id__icontains=search.strip())
    out = list(rows.order_by(F("last_active_at").desc(nulls_last=True), "external_id")[:limit])
    for end_user in out:
        end_user.last_at = end_user.last_active_at
    return out


def end_user_count(*, project: Project, search: str = "") -> int:
    rows = EndUser.objects.filter(project=project)
    return rows.filter(external_id__icontains=search.strip()).count() if search else rows.count()


def end_user_of_project(*, project: Project, external_id: str) -> EndUser | None:
    """The project's end user named `external_id`; None when the project has none by that name."""
    return EndUser.objects.filter(project=project, external_id=external_id).first()


def project_overview(*, project: Project) -> dict:
    """The counts the Overview page shows."""
    return {
        "members": Membership.objects.filter(project=project).count(),
        "keys": ApiKey.objects.filter(project=project, revoked_at__isnull=True).count(),
        "end_users": EndUser.objects.filter(project=project).count(),
        "connections": project.connections.filter(revoked_at__isnull=True).count(),
        "active_end_users": EndUser.objects.filter(
            project=project, last_active_at__gte=timezone.now() - timedelta(days=ACTIVE_DAYS)
        ).count(),
    }
