"""Signing up by email, answering the same whether or not the email has an account: the mail says which.

The sign-up form never tells a visitor whether an email is taken. Its answer is always "check your email";
the mail is either a link that finishes creating the account (no account yet) or a note that the account
exists, with where to log in or reset its password. The account is created only when the link is followed,
so nobody can hold an email they cannot read.

What the form sent waits in the cache under the hash of the link's token (never the token, never the
password: only its hash), for SIGNUP_LINK_SECONDS, and is used once.
"""

import hashlib
import secrets

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.core.cache import cache
from django.core.mail import send_mail
from django.db import IntegrityError, transaction

from .models import Project, User
from .services import PROJECT_NAME_MAX, AccountsError, project_create

SIGNUP_LINK_SECONDS = 24 * 3600  # a day to read the mail and follow the link


def _key(token: str) -> str:
    return "signup:" + hashlib.sha256(token.encode()).hexdigest()


def signup_request(
    *, email: str, password: str, project_name: str, next_url: str, link_for, login_url: str, reset_url: str
) -> None:
    """Mail `email` the link that finishes signing up, or, when it has an account, a note saying so.

    `link_for(token)` is the absolute URL of the link; `login_url` and `reset_url` are where the note points.
    """
    email = email.strip().lower()
    # Hashed in both branches: hashing is the slow step, so a taken email answering faster would tell it.
    hashed = make_password(password)
    if User.objects.filter(email=email).exists():
        send_mail(
            subject="You already have a twin memory account",
            message=(
                f"Someone, perhaps you, tried to sign up to twin memory as {email}. This email already has an "
                f"account: log in at {login_url}, or if you forgot its password, reset it at {reset_url}.\n\n"
                "If it was not you, ignore this mail: nothing changed."
            ),
            from_email=settings.DEFAULT_FROM_EMAIL,
            recipient_list=[email],
        )
        return
    token = secrets.token_urlsafe(32)
    cache.set(
        _key(token),
        {"email": email, "password": hashed, "project_name": project_name, "next": next_url},
        SIGNUP_LINK_SECONDS,
    )
    send_mail(
        subject="Finish signing up to twin memory",
        message=(
            f"Someone, perhaps you, signed up to twin memory as {email}. Follow this link to create the "
            f"account (it works once, for {SIGNUP_LINK_SECONDS // 3600} hours):\n{link_for(token)}\n\n"
            "If it was not you, ignore this mail: no account is created."
        ),
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=[email],
    )


def signup_pending(*, token: str) -> dict | None:
    """What a sign-up link holds (its email, and where to go after), or None once used or expired."""
    pending = cache.get(_key(token))
    return {"email": pending["email"], "next": pending["next"]} if pending else None


def signup_confirm(*, token: str) -> tuple[User, Project, str]:
    """Create the account a link stands for, with its own first project (Owner); returns it and where to go.

    The link works once (the cache's delete says which of two clicks at once took it). Raises AccountsError
    for a used or expired link, or an email that got an account meanwhile.
    """
    pending = cache.get(_key(token))
    if pending is None or not cache.delete(_key(token)):
        raise AccountsError("This link no longer works: it was used, or it is older than a day. Sign up again.")
    email = pending["email"]
    name = pending["project_name"].strip() or f"{email.split('@')[0]}'s project"
    try:
        with transaction.atomic():
            user = User.objects.create(email=email, password=pending["password"])
            project = project_create(name=name[:PROJECT_NAME_MAX], owner=user)
    except IntegrityError:
        raise AccountsError("An account with this email exists already: log in, or reset its password.") from None
    return user, project, pending["next"]
