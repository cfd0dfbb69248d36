"""Writes on accounts: sign-up, projects, members and invitations, keys, end users."""

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from .connections import connection_revoke
from .models import (
    Access,
    ApiKey,
    EndUser,
    Invitation,
    Membership,
    Project,
    Role,
    SecretPolicy,
    User,
    touch,
)
from .permissions import can
from .ratelimit import RATE_LIMIT_MAX

KEY_PREFIX = "tm_"
KEY_DISPLAY_LENGTH = 11  # "tm_" and 8 characters: enough to tell keys apart, useless to an attacker
SECRET_BYTES = 32  # of randomness in a key or an invitation token: 256 bits, 43 URL-safe characters
SLUG_BASE_MAX = 60  # of the slug's 80 characters, leaving room for the "-2", "-3"… that make it unique


def hash_key(raw_key: str) -> str:
    """The stored form of a key. Keys carry 256 bits of randomness, so a fast hash is enough."""
    return hashlib.sha256(raw_key.encode()).hexdigest()


def user_get_or_create(*, email: str) -> tuple[User, bool]:
    email = email.strip().lower()
    user = User.objects.filter(email=email).first()
    if user:
        return user, False
    return User.objects.create_user(email=email, password=None), True


def _unique_slug(name: str) -> str:
    base = slugify(name)[:SLUG_BASE_MAX] or "project"
    slug, n = base, 1
    while Project.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


@transaction.atomic
def project_create(*, name: str, owner: User) -> Project:
    """A new project with its owner as the first member."""
    project = Project.objects.create(name=name, slug=_unique_slug(name))
    Membership.objects.create(user=owner, project=project, role=Role.OWNER)
    return project


def project_get_or_create(*, name: str, owner_email: str) -> tuple[Project, bool]:
    """The project named `name` (by name or slug), created with its owner if missing."""
    existing = Project.objects.filter(name=name).first() or Project.objects.filter(slug=name).first()
    if existing:
        return existing, False
    owner, _ = user_get_or_create(email=owner_email)
    return project_create(name=name, owner=owner), True


def api_key_create(*, project: Project, access: str, name: str = "", created_by: User | None = None):
    """Mint a key. Returns (ApiKey, raw key); the raw key is never stored and cannot be shown again."""
    if access not in Access.values:
        raise ValueError(f"access must be one of {', '.join(Access.values)}")
    raw = KEY_PREFIX + secrets.token_urlsafe(SECRET_BYTES)
    key = ApiKey.objects.create(
        project=project,
        name=name,
        access=access,
        prefix=raw[:KEY_DISPLAY_LENGTH],
        key_hash=hash_key(raw),
        created_by=created_by,
    )
    return key, raw


def api_key_revoke(*, key: ApiKey) -> None:
    """Revoke a key; it fails on its very next use."""
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])


def api_key_touch(*, key: ApiKey) -> None:
    """Record use, at most once a minute per key."""
    touch(key, "last_used_at")


def end_user_touch(*, end_user: EndUser) -> None:
    """Record a write to the end user's memory, at most once a minute."""
    touch(end_user, "last_active_at")


def end_user_get_or_create(*, project: Project, external_id: str) -> EndUser:
    """The end user named `external_id`, created on first write."""
    end_user = EndUser.objects.filter(project=project, external_id=external_id).first()
    if end_user:
        return end_user
    try:
        with transaction.atomic():
            return EndUser.objects.create(project=project, external_id=external_id)
    except IntegrityError:  # created by a concurrent request
        return EndUser.objects.get(project=project, external_id=external_id)


# --- Sign-up, projects ----------------------------------------------------------------------------------

PROJECT_NAME_MAX = 200
INVITATION_DAYS = 7


class AccountsError(ValueError):
    """A request the rules refuse (the last Owner, a role an Admin cannot grant...); its text is for people."""


def project_rename(*, project: Project, name: str) -> Project:
    """Change a project's display name; its slug (in URLs, in people's bookmarks) stays."""
    name = name.strip()
    if not name:
        raise AccountsError("A project needs a name.")
    project.name = name[:PROJECT_NAME_MAX]
    project.save(update_fields=["name"])
    return project


def project_set_rate_limits(*, project: Project, per_credential: int | None, per_end_user: int | None) -> Project:
    """Set the project's rate limits, in requests a minute per credential and per credential and end user;
    None goes back to the service's default. They hold from the next request on (accounts/ratelimit.py)."""
    for value in (per_credential, per_end_user):
        if value is not None and not 1 <= value <= RATE_LIMIT_MAX:
            raise AccountsError(f"A limit is 1 to {RATE_LIMIT_MAX:,} requests a minute, or empty for the default.")
    project.rate_limit_per_credential, project.rate_limit_per_end_user = per_credential, per_end_user
    project.save(update_fields=["rate_limit_per_credential", "rate_limit_per_end_user"])
    return project


def project_set_secret_policy(*, project: Project, policy: str) -> Project:
    """Choose what memory does with an item holding a secret: refuse it (the default) or store it redacted."""
    if policy not in SecretPolicy.values:
        raise AccountsError("Choose to refuse such items or to store them redacted.")
    project.secret_policy = policy
    project.save(update_fields=["secret_policy"])
    return project


@transaction.atomic
def project_delete(*, project: Project, confirmation: str) -> None:
    """Delete a project and everything of it: members, invitations, keys, connections and their tokens, end
    users and all their memory, usage. `confirmation` must be the project's name, typed."""
    if confirmation.strip() != project.name:
        raise AccountsError("Type the project's name exactly to delete it.")
    project.delete()


# --- Members and invitations ----------------------------------------------------------------------------


def _may_touch_owner_role(actor_role: str) -> bool:
    return can(actor_role, "manage_owners")


def _lock_owners(project: Project) -> int:
    """The number of Owners, with their rows locked so two changes cannot both remove the last one."""
    return len(list(Membership.objects.select_for_update().filter(project=project, role=Role.OWNER)))


@transaction.atomic
def membership_change_role(*, membership: Membership, role: str, actor_role: str) -> Membership:
    """Give a member another role. Only an Owner grants or takes away the Owner role; a project always
    keeps an Owner."""
    if role not in Role.values:
        raise AccountsError("Choose Owner, Admin, Member or Viewer.")
    if Role.OWNER in (role, membership.role) and role != membership.role and not _may_touch_owner_role(actor_role):
        raise AccountsError("Only an Owner can make someone an Owner or change an Owner's role.")
    if membership.role == Role.OWNER and role != Role.OWNER and _lock_owners(membership.project) <= 1:
        raise AccountsError("A project always keeps an Owner: make someone else an Owner first.")
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def membership_remove(*, membership: Membership, actor_role: str) -> None:
    """Take a person off the project (their keys stay the project's; their connections to it end)."""
    if membership.role == Role.OWNER:
        if not _may_touch_owner_role(actor_role):
            raise AccountsError("Only an Owner can remove an Owner.")
        if _lock_owners(membership.project) <= 1:
            raise AccountsError("A project always keeps an Owner: make someone else an Owner first.")
    for connection in membership.project.connections.filter(user=membership.user, revoked_at__isnull=True):
        connection_revoke(connection=connection)
    membership.delete()


@transaction.atomic
def invitation_create(
    *, project: Project, email: str, role: str, invited_by: User, actor_role: str
) -> tuple[Invitation, str]:
    """Invite `email` to the project with `role`. Returns (Invitation, raw token); only the token's hash is
    kept, so the link can be sent once and never shown again. A new invitation replaces an open one."""
    email = email.strip().lower()
    if role not in Role.values:
        raise AccountsError("Choose Owner, Admin, Member or Viewer.")
    if role == Role.OWNER and not _may_touch_owner_role(actor_role):
        raise AccountsError("Only an Owner can invite an Owner.")
    if Membership.objects.filter(project=project, user__email=email).exists():
        raise AccountsError(f"{email} is already a member of this project.")
    now = timezone.now()
    Invitation.objects.filter(project=project, email=email, accepted_at__isnull=True, revoked_at__isnull=True).update(
        revoked_at=now
    )
    raw = secrets.token_urlsafe(SECRET_BYTES)
    invitation = Invitation.objects.create(
        project=project,
        email=email,
        role=role,
        token_hash=hash_key(raw),
        invited_by=invited_by,
        expires_at=now + timedelta(days=INVITATION_DAYS),
    )
    return invitation, raw


def invitation_send(*, invitation: Invitation, link: str) -> None:
    """Mail the invitation link through Django's email backend (the console log in development)."""
    inviter = invitation.invited_by.email if invitation.invited_by else "Someone"
    send_mail(
        subject=f"Join {invitation.project.name} on twin memory",
        message=(
            f"{inviter} invited you to the project {invitation.project.name} on twin memory as "
            f"{invitation.get_role_display()}.\n\nAccept: {link}\n\n"
            f"The link works once and for {INVITATION_DAYS} days. If you did not expect it, ignore this mail.\n"
        ),
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=[invitation.email],
    )


def invitation_revoke(*, invitation: Invitation) -> None:
    if invitation.revoked_at is None and invitation.accepted_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])


@transaction.atomic
def invitation_accept(*, invitation: Invitation, user: User) -> Membership:
    """Join the project with the invited role. The invitation is for one email: only that account accepts.
    A person already in the project keeps their role."""
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if invitation.accepted_at or invitation.revoked_at or invitation.expires_at <= timezone.now():
        raise AccountsError("This invitation has been used, withdrawn or has expired.")
    if user.email.lower() != invitation.email.lower():
        raise AccountsError(f"This invitation is for {invitation.email}. Log in with that email to accept it.")
    membership, _ = Membership.objects.get_or_create(
        user=user, project=invitation.project, defaults={"role": invitation.role}
    )
    invitation.accepted_at, invitation.accepted_by = timezone.now(), user
    invitation.save(update_fields=["accepted_at", "accepted_by"])
    return membership
