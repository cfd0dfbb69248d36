"""What the consent card decides: the projects a person can connect an app to, the end user and access their
role allows there (accounts.permissions, the one table), and the Connection their choices become.

The card itself (the page, the protocol around it) is console.consent; this module holds the rules.
"""

from django.db import transaction

from .connections import connection_revoke, own_end_user_id
from .models import Access, Connection, EndUser, Membership, OAuthApplication, Project, Role, User
from .permissions import can
from .scopes import SCOPE_READ, SCOPE_WRITE
from .services import end_user_get_or_create

# What each access on the card grants, and the words the card and Connected apps show for it.
ACCESS_SCOPES: dict[str, tuple[str, ...]] = {Access.READ: (SCOPE_READ,), Access.WRITE: (SCOPE_READ, SCOPE_WRITE)}
ACCESS_LABELS: dict[str, str] = {Access.WRITE: "Read and save", Access.READ: "Read only"}


def scope_for_access(access: str) -> str:
    """The space-separated scopes a token carries for `access`."""
    return " ".join(ACCESS_SCOPES[access])


class ConsentError(Exception):
    """A choice on the card the person may not make; `field` names the card's field."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field, self.message = field, message


def consent_memberships(*, user: User) -> list[Membership]:
    """The projects a person can connect an app to, by name: every project they are a member of."""
    return list(Membership.objects.filter(user=user).select_related("project").order_by("project__name", "pk"))


def consent_resolve(*, user: User, project_slug: str, end_user_id: str, access: str, offered: list[str]):
    """Check the card's choices against the person's role; returns (project, end user id, access).

    The person's own end user is always allowed; another end user only for a role that may
    "connect_any_end_user", and only one that exists in the project. Read and save needs "grant_write" and
    the app to have asked for memory:write (`offered` lists the accesses the card offered).
    """
    membership = Membership.objects.filter(user=user, project__slug=project_slug).select_related("project").first()
    if membership is None:
        raise ConsentError("project", "Choose one of your projects.")
    project, role = membership.project, membership.role
    if access not in offered:
        raise ConsentError("access", "Choose one of the accesses offered.")
    if access == Access.WRITE and not can(role, "grant_write"):
        raise ConsentError("access", f"As a {Role(role).label} of {project.name} you can grant Read only.")
    end_user_id = (end_user_id or "").strip() or own_end_user_id(user)
    if end_user_id != own_end_user_id(user):
        if not can(role, "connect_any_end_user"):
            raise ConsentError(
                "end_user", f"As a {Role(role).label} of {project.name} you can connect only your own end user."
            )
        if not EndUser.objects.filter(project=project, external_id=end_user_id).exists():
            raise ConsentError("end_user", f"{project.name} has no end user by that name.")  # never quoted
    return project, end_user_id, access


@transaction.atomic
def connection_grant(
    *, user: User, application: OAuthApplication, project: Project, end_user_id: str, access: str
) -> Connection:
    """Record what the person granted on the card. The same app re-signing in for the same end user
    replaces its earlier connection, so one app and end user never hold two live connections."""
    end_user = end_user_get_or_create(project=project, external_id=end_user_id)
    earlier = Connection.objects.filter(
        user=user, application=application, project=project, end_user=end_user, revoked_at__isnull=True
    )
    for connection in earlier:
        connection_revoke(connection=connection)
    return Connection.objects.create(
        user=user, application=application, project=project, end_user=end_user, access=access
    )
