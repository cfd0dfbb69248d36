"""OAuth connections: what a person granted an app (project, end user, access), what it reaches now, its
tokens, and its end.

A person's choices on the consent card become a Connection (accounts.consent); every code and token issued
for it points at the Connection, so a token alone names whose memory it reaches. A connection keeps reaching
only what its person's role still allows (accounts.permissions, the one table).
"""

import hashlib

from django.db import transaction
from django.utils import timezone

from .models import (
    END_USER_ID_PATTERN,
    Access,
    Connection,
    Membership,
    OAuthAccessToken,
    OAuthGrant,
    OAuthRefreshToken,
    Project,
    User,
    touch,
)
from .permissions import can
from .resource import resource_is
from .scopes import SCOPE_READ


def token_checksum(raw_token: str) -> str:
    """The form in which django-oauth-toolkit stores a token (only its SHA-256), to look one up."""
    return hashlib.sha256(raw_token.encode()).hexdigest()


def own_end_user_id(user: User) -> str:
    """The end user a person reaches by default: their email, or `user:<id>` if the email is no usable id."""
    email = user.email.lower()
    return email if END_USER_ID_PATTERN.match(email) else f"user:{user.pk}"


@transaction.atomic
def connection_revoke(*, connection: Connection) -> None:
    """Disconnect: the refresh tokens, the access tokens and any unused code die at once."""
    now = timezone.now()
    Connection.objects.filter(pk=connection.pk, revoked_at__isnull=True).update(revoked_at=now)
    OAuthRefreshToken.objects.filter(connection=connection, revoked__isnull=True).update(revoked=now, updated=now)
    OAuthAccessToken.objects.filter(connection=connection).delete()
    OAuthGrant.objects.filter(connection=connection).delete()
    connection.revoked_at = connection.revoked_at or now


def connection_touch(*, connection: Connection) -> None:
    """Record use, at most once a minute per connection."""
    touch(connection, "last_used_at")


def connection_access(connection: Connection) -> str | None:
    """The access a connection carries now: None once revoked, or once its person is deactivated, has left
    the project or lost the role that let them reach this end user; Read only once they may not grant write."""
    if connection.revoked_at is not None or not connection.user.is_active:
        return None
    role = (
        Membership.objects.filter(user_id=connection.user_id, project_id=connection.project_id)
        .values_list("role", flat=True)
        .first()
    )
    if role is None:
        return None
    if connection.end_user.external_id != own_end_user_id(connection.user) and not can(role, "connect_any_end_user"):
        return None
    return connection.access if can(role, "grant_write") else Access.READ


class InvalidToken(Exception):
    """An access token this service will not honour; the message says why."""


def connection_for_access_token(raw_token: str, *, resource: str) -> tuple[Connection, str]:
    """The connection and access an OAuth access token carries, checked: issued here for a connection,
    unexpired, bound to `resource` (this server's /v1/mcp), and still allowed. Raises InvalidToken."""
    token = (
        OAuthAccessToken.objects.select_related(
            "connection__user", "connection__project", "connection__end_user", "connection__application"
        )
        .filter(token_checksum=token_checksum(raw_token))
        .first()
    )
    if token is None or token.connection is None or SCOPE_READ not in token.scope.split():
        raise InvalidToken("That token is not one this service issued.")
    if token.is_expired():
        raise InvalidToken("That token has expired: refresh it.")
    if len(token.resource) != 1 or not resource_is(token.resource[0], resource):
        raise InvalidToken(f"That token was issued for another resource, not {resource}.")
    access = connection_access(token.connection)
    if access is None:
        raise InvalidToken("That connection was disconnected: sign in again.")
    return token.connection, access


def connections_of_user(*, user: User):
    """A person's live connections, newest first."""
    return (
        Connection.objects.filter(user=user, revoked_at__isnull=True)
        .select_related("application", "project", "end_user")
        .order_by("-created_at", "-pk")
    )


def connections_of_project(*, project: Project):
    """Every live connection to a project's memory, whoever granted it, newest first."""
    return (
        Connection.objects.filter(project=project, revoked_at__isnull=True)
        .select_related("application", "user", "end_user")
        .order_by("-created_at", "-pk")
    )


def connection_of_user(*, user: User, pk: int) -> Connection | None:
    """One of a person's live connections; None for not found and not theirs alike."""
    return connections_of_user(user=user).filter(pk=pk).first()


def connection_of_project(*, project: Project, pk: int) -> Connection | None:
    """One live connection of a project; None for not found and another project's alike."""
    return connections_of_project(project=project).filter(pk=pk).first()
