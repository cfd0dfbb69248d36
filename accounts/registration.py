"""Dynamic client registration (RFC 7591): how claude.ai, ChatGPT or any MCP client registers itself, and
the bounds on what it may register. Served at /oauth/register by mcp_server.oauth. A client that signs in by Client ID
Metadata Document instead is registered by django-oauth-toolkit on first sight (CIMD_ENABLED)."""

from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db import transaction
from oauth2_provider.generators import generate_client_secret

from twin.lines import breaks_line

from .models import CLIENT_NAME_ONE_LINE, OAuthApplication
from .scopes import SCOPES

REGISTRATION_BODY_MAX = 16 * 1024  # bytes
REDIRECT_URIS_MAX = 10
REDIRECT_URI_MAX = 2000  # characters
CLIENT_NAME_MAX = 200
TOKEN_ENDPOINT_AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
DEFAULT_TOKEN_ENDPOINT_AUTH_METHOD = "client_secret_basic"  # RFC 7591 §2
PUBLIC_CLIENT_AUTH_METHOD = "none"
GRANT_TYPES = ("authorization_code", "refresh_token")
RESPONSE_TYPES = ("code",)
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
SECRET_NEVER_EXPIRES = 0  # RFC 7591 §3.2.1: client_secret_expires_at 0 means it does not expire


def client_host(application: OAuthApplication) -> str:
    """The host that vouches for an app signed in by Client ID Metadata Document: its client_id URL's, shown
    beside the name the document gives on the consent card and in Connected apps ("" for any other app)."""
    if application.registration_source != OAuthApplication.RegistrationSource.CIMD:
        return ""
    return urlsplit(application.client_id).hostname or ""


class RegistrationError(Exception):
    """RFC 7591 §3.2.2: `error` is invalid_redirect_uri or invalid_client_metadata; `field` names the metadata
    refused (e.g. "redirect_uris[1]"), and `description` says why without quoting the value: registration is
    open to anyone, so what it refuses is a stranger's text, never sent back or logged."""

    def __init__(self, error: str, description: str, field: str):
        super().__init__(description)
        self.error, self.description, self.field = error, description, field


# The metadata each field of the Application model is registered from, to name a refusal of its own checks.
_METADATA_OF_FIELD = {"redirect_uris": "redirect_uris", "name": "client_name"}


def redirect_uri_problem(uri) -> str | None:
    """Why a redirect URI cannot be registered, or None: https, or http on a loopback address (RFC 8252), one
    URI with no whitespace in it (an app's URIs are stored space-joined, so a space inside one would make two,
    the second never checked). Said of "it", never quoting the URI."""
    if not isinstance(uri, str) or not uri:
        return "must be a non-empty string."
    if len(uri) > REDIRECT_URI_MAX:
        return f"is {len(uri)} characters; at most {REDIRECT_URI_MAX}."
    if breaks_line(uri) or any(c.isspace() for c in uri):
        return "must be one URI: no whitespace, control character or bidirectional control."
    try:
        parts = urlsplit(uri)
        _ = parts.port  # parsed when read: a port that is no number, or out of range, raises
    except ValueError:
        return "is not a URL this server can read (its host or port)."
    if "#" in uri or "@" in parts.netloc:
        return "must have no fragment and no user information."
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS:
        return None
    return "must be https, or http on a loopback address (127.0.0.1, [::1] or localhost)."


def _string_list(metadata: dict, name: str, default: list) -> list[str]:
    value = metadata.get(name, default)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RegistrationError("invalid_client_metadata", f"{name} must be an array of strings.", name)
    return value


def _redirect_uris(metadata: dict) -> list[str]:
    """The redirect URIs asked for, each one checked; at least one, at most REDIRECT_URIS_MAX."""
    redirect_uris = _string_list(metadata, "redirect_uris", [])
    if not redirect_uris:
        raise RegistrationError("invalid_redirect_uri", "redirect_uris is required.", "redirect_uris")
    if len(redirect_uris) > REDIRECT_URIS_MAX:
        raise RegistrationError("invalid_redirect_uri", f"At most {REDIRECT_URIS_MAX} redirect_uris.", "redirect_uris")
    for index, uri in enumerate(redirect_uris):
        if problem := redirect_uri_problem(uri):
            field = f"redirect_uris[{index}]"
            raise RegistrationError("invalid_redirect_uri", f"{field} {problem}", field)
    return redirect_uris


def _checked_metadata(metadata) -> dict:
    """The metadata this server acts on, checked: redirect URIs, grant and response types, the token
    endpoint's auth method, the client's name, and the scopes asked for, narrowed to those served here."""
    if not isinstance(metadata, dict):
        raise RegistrationError("invalid_client_metadata", "The body must be a JSON object.", "body")
    metadata = {name: value for name, value in metadata.items() if value is not None}  # null reads as absent
    redirect_uris = _redirect_uris(metadata)
    grant_types = _string_list(metadata, "grant_types", ["authorization_code"])
    if "authorization_code" not in grant_types or not set(grant_types) <= set(GRANT_TYPES):
        raise RegistrationError(
            "invalid_client_metadata", "grant_types may be authorization_code and refresh_token.", "grant_types"
        )
    if _string_list(metadata, "response_types", list(RESPONSE_TYPES)) != list(RESPONSE_TYPES):
        raise RegistrationError("invalid_client_metadata", 'response_types must be ["code"].', "response_types")
    method = metadata.get("token_endpoint_auth_method", DEFAULT_TOKEN_ENDPOINT_AUTH_METHOD)
    if method not in TOKEN_ENDPOINT_AUTH_METHODS:
        raise RegistrationError(
            "invalid_client_metadata",
            f"token_endpoint_auth_method may be {', '.join(TOKEN_ENDPOINT_AUTH_METHODS)}.",
            "token_endpoint_auth_method",
        )
    name = metadata.get("client_name", "")
    if not isinstance(name, str) or len(name) > CLIENT_NAME_MAX:
        raise RegistrationError(
            "invalid_client_metadata",
            f"client_name must be a string of at most {CLIENT_NAME_MAX} characters.",
            "client_name",
        )
    if breaks_line(name):
        raise RegistrationError("invalid_client_metadata", f"client_name {CLIENT_NAME_ONE_LINE}", "client_name")
    requested = metadata.get("scope")
    served = list(SCOPES)
    scopes = [s for s in requested.split() if s in served] if isinstance(requested, str) else []
    return {"redirect_uris": redirect_uris, "method": method, "name": name, "scope": " ".join(scopes or served)}


@transaction.atomic
def oauth_client_register(*, metadata) -> dict:
    """Register a client (RFC 7591) for the authorization code flow with PKCE; returns the registration.

    A public client (token_endpoint_auth_method "none") gets no secret; a confidential one
    (client_secret_post or client_secret_basic, the default) gets a secret, shown only in this answer and
    stored hashed. Unknown metadata is ignored, null reads as absent, and scope is narrowed to the scopes
    served here.
    """
    checked = _checked_metadata(metadata)
    public = checked["method"] == PUBLIC_CLIENT_AUTH_METHOD
    secret = generate_client_secret()
    application = OAuthApplication(
        name=checked["name"].strip(),
        redirect_uris=" ".join(checked["redirect_uris"]),
        client_secret=secret,
        client_type=OAuthApplication.CLIENT_PUBLIC if public else OAuthApplication.CLIENT_CONFIDENTIAL,
        authorization_grant_type=OAuthApplication.GRANT_AUTHORIZATION_CODE,
        registration_source=OAuthApplication.RegistrationSource.DCR,
    )
    try:
        application.full_clean()
    except ValidationError as invalid:  # its messages quote the value: only the field is named
        field = _METADATA_OF_FIELD.get(next(iter(getattr(invalid, "error_dict", {})), ""), "body")
        error = "invalid_redirect_uri" if field == "redirect_uris" else "invalid_client_metadata"
        raise RegistrationError(error, f"{field} is not accepted by the authorization server.", field) from None
    application.save()
    registration = {
        "client_id": application.client_id,
        "client_id_issued_at": int(application.created.timestamp()),
        "client_name": application.name,
        "redirect_uris": checked["redirect_uris"],
        "grant_types": list(GRANT_TYPES),
        "response_types": list(RESPONSE_TYPES),
        "token_endpoint_auth_method": checked["method"],
        "scope": checked["scope"],
    }
    if not public:
        registration.update(client_secret=secret, client_secret_expires_at=SECRET_NEVER_EXPIRES)
    return registration
