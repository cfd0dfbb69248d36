"""Who is who: users, projects, members and their roles, end users, API keys, and the OAuth models."""

import re
from datetime import datetime, timedelta
from typing import ClassVar

from django.conf import settings
from django.contrib.auth.models import AbstractUser, BaseUserManager
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone
from oauth2_provider.models import (
    AbstractAccessToken,
    AbstractApplication,
    AbstractGrant,
    AbstractIDToken,
    AbstractRefreshToken,
)

from twin.lines import breaks_line

# An end user is named by the caller's X-Twin-Account value.
END_USER_ID_PATTERN = re.compile(r"^[A-Za-z0-9_\-.:@]{1,128}$")
END_USER_ID_MAX = 128

# What an OAuth app's name must be, said after the field's name.
CLIENT_NAME_ONE_LINE = "must be one line: no control character, line break or bidirectional control."

# A key's or a connection's last use, an end user's last activity: written at most this often (touch).
LAST_USED_EVERY_SECONDS = 60


def touch(instance: models.Model, field: str) -> None:
    """Set the instance's time `field` to now, and its row's, at most once every LAST_USED_EVERY_SECONDS, so
    reads don't each cost a write. The row's own filter decides, so a row that is fresh is not waited for
    while another transaction holds it (an end user's, while the read of its memory writes a slice: every
    add during an import would wait for it; bench/README.md "Adding")."""
    now = timezone.now()
    stale = now - timedelta(seconds=LAST_USED_EVERY_SECONDS)
    if getattr(instance, field) is None or getattr(instance, field) < stale:
        type(instance)._default_manager.filter(
            Q(**{f"{field}__isnull": True}) | Q(**{f"{field}__lt": stale}), pk=instance.pk
        ).update(**{field: now})
        setattr(instance, field, now)


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def create_user(self, email, password=None, **extra):
        if not email:
            raise ValueError("An email is required")
        user = self.model(email=self.normalize_email(email).lower(), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_superuser(self, email, password=None, **extra):
        extra.setdefault("is_staff", True)
        extra.setdefault("is_superuser", True)
        return self.create_user(email, password, **extra)


class User(AbstractUser):  # type: ignore[django-manager-missing]  # related: the toolkit's models, untyped
    """A console account; people log in by email."""

    username = None  # type: ignore[assignment]  # people sign in by email: AbstractUser's username is removed
    email = models.EmailField(unique=True)

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS: ClassVar[list[str]] = []

    objects: ClassVar[UserManager] = UserManager()  # type: ignore[assignment]  # by email, not AbstractUser's username

    def __str__(self):
        return self.email


class SecretPolicy(models.TextChoices):
    """What memory does with an item holding a secret (a key, a password, a card number: memory/secrets/)."""

    REFUSE = "refuse", "Refuse the item"  # the default: stored never, not even in part
    REDACT = "redact", "Store it with each secret redacted"  # "[redacted: AWS Access Key]" in its place


class Project(models.Model):
    """A customer's project: its members, keys and end users."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    secret_policy = models.CharField(max_length=8, choices=SecretPolicy.choices, default=SecretPolicy.REFUSE)
    created_at = models.DateTimeField(auto_now_add=True)
    # Requests a minute per credential, and per credential and end user (accounts/ratelimit.py), as the
    # project's Owners and Admins set them; empty: settings.RATE_LIMIT_PER_CREDENTIAL / _PER_END_USER.
    rate_limit_per_credential = models.PositiveIntegerField(null=True, blank=True)
    rate_limit_per_end_user = models.PositiveIntegerField(null=True, blank=True)
    # Not a column: the signed-in person's Role value in it, on the project console.access.project_for returns.
    role: str

    def __str__(self):
        return self.slug


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    ADMIN = "admin", "Admin"
    MEMBER = "member", "Member"
    VIEWER = "viewer", "Viewer"


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "project"], name="one_membership_per_project")]


class EndUser(models.Model):
    """One person whose memory a project keeps, named by the X-Twin-Account value."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="end_users")
    external_id = models.CharField(max_length=END_USER_ID_MAX)
    created_at = models.DateTimeField(auto_now_add=True)
    last_active_at = models.DateTimeField(null=True, blank=True)
    # Not columns: shown on the console's list of end users (selectors.end_users_of_project sets last_at,
    # console.end_users the sizes memory counts).
    last_at: datetime | None
    items_n: int
    passages_n: int

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "external_id"], name="one_end_user_per_id")]

    def __str__(self):
        return self.external_id


class Access(models.TextChoices):
    READ = "read", "Read"
    WRITE = "write", "Read and write"


class ApiKey(models.Model):
    """A project's key. Only its SHA-256 is stored; the key itself is shown once, at creation."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, blank=True)
    access = models.CharField(max_length=8, choices=Access.choices)
    prefix = models.CharField(max_length=16)
    key_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"{self.prefix}… ({self.access})"


# django-oauth-toolkit's models, swapped together so later migrations can give a connection its
# project, end user and access without touching the toolkit's own tables.
class OAuthApplication(AbstractApplication):
    def clean(self):
        """An app's name is shown on one line (the consent card, Connected apps), so it holds no control
        character, line break or bidirectional control (twin/lines.py): one that reorders the line could show
        a name other than the one stored. Checked for every app, registered (DCR) or named by its metadata
        document (CIMD, which the toolkit cleans before it stores)."""
        super().clean()
        if breaks_line(self.name):
            raise ValidationError({"name": f"The name {CLIENT_NAME_ONE_LINE}"})

    class Meta(AbstractApplication.Meta):
        swappable = "OAUTH2_PROVIDER_APPLICATION_MODEL"


class OAuthGrant(AbstractGrant):
    # The choices on the consent card travel from the code to the tokens through this connection.
    connection = models.ForeignKey(
        "accounts.Connection", null=True, blank=True, on_delete=models.CASCADE, related_name="grants"
    )
    # Kept once exchanged, so that a second use is recognised and what the code issued is revoked.
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta(AbstractGrant.Meta):
        swappable = "OAUTH2_PROVIDER_GRANT_MODEL"


class OAuthIDToken(AbstractIDToken):
    class Meta(AbstractIDToken.Meta):
        swappable = "OAUTH2_PROVIDER_ID_TOKEN_MODEL"


class OAuthAccessToken(AbstractAccessToken):
    connection = models.ForeignKey(
        "accounts.Connection", null=True, blank=True, on_delete=models.CASCADE, related_name="access_tokens"
    )

    class Meta(AbstractAccessToken.Meta):
        swappable = "OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL"


class OAuthRefreshToken(AbstractRefreshToken):
    connection = models.ForeignKey(
        "accounts.Connection", null=True, blank=True, on_delete=models.CASCADE, related_name="refresh_tokens"
    )

    class Meta(AbstractRefreshToken.Meta):
        swappable = "OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL"


class Connection(models.Model):  # type: ignore[django-manager-missing]  # related: the toolkit's models, untyped
    """An app a person signed in to by OAuth: whose memory it reaches (project, end user) and how far.

    Made on the consent card; every code, access token and refresh token issued for it points here, so the
    token names its project, end user and access and no header can change them. Revoking it (a disconnect,
    a reused refresh token) ends all of its tokens at once.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="connections")
    application = models.ForeignKey(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL, on_delete=models.CASCADE, related_name="connections"
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="connections")
    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="connections")
    access = models.CharField(max_length=8, choices=Access.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["user", "revoked_at"], name="connection_user_live"),
            models.Index(fields=["project", "revoked_at"], name="connection_project_live"),
        ]

    def __str__(self):
        return f"{self.application} → {self.project}/{self.end_user} ({self.access})"


class Invitation(models.Model):
    """An invitation to join a project with a role, sent by email as a link. Only the token's SHA-256 is kept."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=16, choices=Role.choices)
    token_hash = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["project", "accepted_at"], name="invitation_project_open")]

    def __str__(self):
        return f"{self.email} → {self.project} ({self.role})"
