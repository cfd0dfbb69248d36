"""The sign-in, step by step, through the real URLs with Django's test client: register, the consent card,
the code, the tokens. Shared by the tests/oauth/ files.
"""

import base64
import hashlib
import itertools
import json
import os
import secrets
from urllib.parse import parse_qs, urlencode, urlsplit

from django.test import Client

MCP_URL = "http://testserver/v1/mcp"
ISSUER = "http://testserver"
REDIRECT_URI = "https://app.example/callback"
BOTH = "memory:read memory:write"
_addresses = itertools.count(1)


def fresh_address() -> str:
    """A client address of this run's own, so registrations never share a rate-limit window by accident."""
    n = next(_addresses)
    return f"10.{os.getpid() % 250}.{n // 250 % 250}.{n % 250 + 1}"


def pkce() -> tuple[str, str]:
    """(code_verifier, S256 code_challenge), computed here as RFC 7636 §4.2 says."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


def register(client: Client | None = None, address: str | None = None, **metadata):
    """POST /oauth/register; returns the response."""
    body = {"client_name": "Claude", "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none", **metadata}
    return (client or Client()).post(
        "/oauth/register",
        data=json.dumps(body),
        content_type="application/json",
        REMOTE_ADDR=address or fresh_address(),
    )


def registered(**metadata) -> dict:
    response = register(**metadata)
    assert response.status_code == 201, response.content
    return response.json()


def authorize_query(app: dict, challenge: str | None, *, state="st-1", scope=BOTH, resource=MCP_URL, **extra) -> str:
    params = {
        "response_type": "code",
        "client_id": app["client_id"],
        "redirect_uri": REDIRECT_URI,
        "state": state,
        "scope": scope,
        "resource": resource,
    }
    if challenge is not None:
        params.update(code_challenge=challenge, code_challenge_method="S256")
    params.update(extra)
    return "/oauth/authorize?" + urlencode({k: v for k, v in params.items() if v is not None})


def card_post_data(response, **choices) -> dict:
    """The consent form as the browser would send it: its hidden fields, its defaults, then `choices`."""
    form = response.context["form"]
    data = {name: form[name].value() or "" for name in form.fields if name != "allow"}
    data.update({"allow": "1", **choices})
    return {k: v for k, v in data.items() if v is not None}


def consent(client: Client, url: str, **choices):
    """GET the card at `url`, then answer it (Allow; allow=None is Cancel); returns the POST's response."""
    card = client.get(url)
    assert card.status_code == 200, card.content
    return client.post(url, card_post_data(card, **choices))


def answer(response) -> dict:
    """The query the app got back at its redirect URI (one value per name)."""
    assert response.status_code == 302, response.content[:500]
    location = response["Location"]
    assert location.startswith(REDIRECT_URI), location
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def token(data: dict, client: Client | None = None, **headers):
    """POST /oauth/token, form-encoded as RFC 6749 says."""
    return (client or Client()).post(
        "/oauth/token", data=urlencode(data), content_type="application/x-www-form-urlencoded", **headers
    )


def exchange(app: dict, code: str, verifier: str | None, **extra):
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT_URI,
        "client_id": app["client_id"],
        "resource": MCP_URL,
    }
    if verifier is not None:
        data["code_verifier"] = verifier
    data.update(extra)
    return token({k: v for k, v in data.items() if v is not None})


def refresh(app: dict, refresh_token: str, **extra):
    data = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": app["client_id"], **extra}
    return token(data)


def connect(user, *, access="write", app: dict | None = None, scope=BOTH, **choices) -> dict:
    """The whole sign-in for `user`: register (unless `app`), the card, the code, the tokens.

    Returns the token response with the app added under "app".
    """
    app = app or registered()
    client = Client()
    client.force_login(user)
    verifier, challenge = pkce()
    code = answer(consent(client, authorize_query(app, challenge, scope=scope), access=access, **choices))["code"]
    response = exchange(app, code, verifier)
    assert response.status_code == 200, response.content
    return {**response.json(), "app": app}


def member(project, email: str, role: str):
    """A person with a password (`<name>-password-1`) on `project` in `role`."""
    from accounts.models import Membership
    from accounts.services import user_get_or_create

    user, _ = user_get_or_create(email=email)
    user.set_password(f"{email.split('@')[0]}-password-1")
    user.save()
    Membership.objects.create(user=user, project=project, role=role)
    return user


def stored(model, raw: str):
    """The row the toolkit stored for a raw token: only its SHA-256 checksum is kept."""
    return model.objects.filter(token_checksum=hashlib.sha256(raw.encode()).hexdigest()).order_by("-pk").first()
