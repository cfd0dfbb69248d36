"""Writes on accounts: projects, members, keys, end users."""

import hashlib
import secrets

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from .models import Access, ApiKey, EndUser, Membership, Project, Role, User

KEY_PREFIX = "tm_"
KEY_DISPLAY_LENGTH = 11  # "tm_" and 8 characters: enough to tell keys apart, useless to an attacker


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
    base = slugify(name)[:60] or "project"
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
    raw = KEY_PREFIX + secrets.token_urlsafe(32)  # 43 URL-safe characters
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
    """Record use, at most once a minute per key, so reads don't each cost a write."""
    now = timezone.now()
    if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        key.last_used_at = now


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
