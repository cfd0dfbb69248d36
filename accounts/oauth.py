"""Sign-in (OAuth) for claude.ai, ChatGPT and any MCP client: scopes, connections, registration, validator.

django-oauth-toolkit runs the protocol (codes, PKCE, tokens, rotation); this module is where twin memory
meets it. A person's choices on the consent card become a Connection (project, end user, access); every
code and token issued for it points at the Connection, so a token alone names whose memory it reaches.
"""

import hashlib
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from oauth2_provider.generators import generate_client_secret
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.settings import oauth2_settings
from oauthlib.oauth2.rfc6749.errors import InvalidGrantError

from .models import (
    END_USER_ID_PATTERN, Access, Connection, EndUser, Membership, OAuthAccessToken, OAuthApplication, OAuthGrant,
    OAuthRefreshToken, Project, Role, User,
)
from .services import end_user_get_or_create

SCOPE_READ = "memory:read"
SCOPE_WRITE = "memory:write"
ACCESS_SCOPES = {Access.READ: (SCOPE_READ,), Access.WRITE: (SCOPE_READ, SCOPE_WRITE)}
ACCESS_LABELS = {Access.WRITE: "Read and save", Access.READ: "Read only"}

# The protected resource: a token's audience must be this server's /v1/mcp (RFC 8707).
MCP_RESOURCE_PATH = "/v1/mcp"

# Who may do what on the consent card and the project's MCP page.
ROLES_REACHING_ANY_END_USER = frozenset({Role.OWNER, Role.ADMIN, Role.MEMBER})  # else: only their own
ROLES_GRANTING_WRITE = frozenset({Role.OWNER, Role.ADMIN, Role.MEMBER})  # a Viewer grants Read only
ROLES_SEEING_PROJECT_CONNECTIONS = frozenset({Role.OWNER, Role.ADMIN})

LAST_USED_EVERY_SECONDS = 60


def mcp_resource_url(request) -> str:
    """This server's /v1/mcp as an absolute URL: the resource every token is bound to."""
    return request.build_absolute_uri(MCP_RESOURCE_PATH)


def _resource_key(uri) -> tuple | None:
    """A resource URI compared the way RFC 3986 normalizes it (case of scheme and host, default port)."""
    if not isinstance(uri, str) or "#" in uri:
        return None
    parts = urlsplit(uri)
    try:
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname or parts.username is not None or parts.query:
        return None
    scheme = parts.scheme.lower()
    return scheme, parts.hostname.lower(), port or {"http": 80, "https": 443}.get(scheme), parts.path or "/"


def resource_is(uri, expected: str) -> bool:
    """Whether `uri` names the resource `expected` (this server's /v1/mcp)."""
    key = _resource_key(uri)
    return key is not None and key == _resource_key(expected)


def scope_for_access(access: str) -> str:
    return " ".join(ACCESS_SCOPES[access])


def own_end_user_id(user: User) -> str:
    """The end user a person reaches by default: their email, or `user:<id>` if the email is no usable id."""
    email = user.email.lower()
    return email if END_USER_ID_PATTERN.match(email) else f"user:{user.pk}"


# --- The consent card ------------------------------------------------------------------------------------


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

    The person's own end user is always allowed; another end user only for ROLES_REACHING_ANY_END_USER and
    only one that exists in the project. Read and save needs ROLES_GRANTING_WRITE and the app to have asked
    for memory:write (`offered` lists the accesses the card offered).
    """
    membership = Membership.objects.filter(user=user, project__slug=project_slug).select_related("project").first()
    if membership is None:
        raise ConsentError("project", "Choose one of your projects.")
    project, role = membership.project, membership.role
    if access not in offered:
        raise ConsentError("access", "Choose one of the accesses offered.")
    if access == Access.WRITE and role not in ROLES_GRANTING_WRITE:
        raise ConsentError("access", f"As a {Role(role).label} of {project.name} you can grant Read only.")
    end_user_id = (end_user_id or "").strip() or own_end_user_id(user)
    if end_user_id != own_end_user_id(user):
        if role not in ROLES_REACHING_ANY_END_USER:
            raise ConsentError(
                "end_user", f"As a {Role(role).label} of {project.name} you can connect only your own end user.")
        if not EndUser.objects.filter(project=project, external_id=end_user_id).exists():
            raise ConsentError("end_user", f"{project.name} has no end user {end_user_id!r}.")
    return project, end_user_id, access


@transaction.atomic
def connection_grant(*, user: User, application: OAuthApplication, project: Project, end_user_id: str,
                     access: str) -> Connection:
    """Record what the person granted on the card. The same app re-signing in for the same end user
    replaces its earlier connection, so one app and end user never hold two live connections."""
    end_user = end_user_get_or_create(project=project, external_id=end_user_id)
    earlier = Connection.objects.filter(
        user=user, application=application, project=project, end_user=end_user, revoked_at__isnull=True)
    for connection in earlier:
        connection_revoke(connection=connection)
    return Connection.objects.create(
        user=user, application=application, project=project, end_user=end_user, access=access)


# --- Connections -----------------------------------------------------------------------------------------


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
    """Record use, at most once a minute per connection, so reads don't each cost a write."""
    now = timezone.now()
    if connection.last_used_at is None or (now - connection.last_used_at).total_seconds() > LAST_USED_EVERY_SECONDS:
        Connection.objects.filter(pk=connection.pk).update(last_used_at=now)
        connection.last_used_at = now


def connection_access(connection: Connection) -> str | None:
    """The access a connection carries now: None once revoked, or once its person is deactivated, has left
    the project or lost the role that let them reach this end user; Read only once they are a Viewer."""
    if connection.revoked_at is not None or not connection.user.is_active:
        return None
    role = Membership.objects.filter(
        user_id=connection.user_id, project_id=connection.project_id).values_list("role", flat=True).first()
    if role is None:
        return None
    if connection.end_user.external_id != own_end_user_id(connection.user) and role not in ROLES_REACHING_ANY_END_USER:
        return None
    return connection.access if role in ROLES_GRANTING_WRITE else Access.READ


class InvalidToken(Exception):
    """An access token this service will not honour; the message says why."""


def connection_for_access_token(raw_token: str, *, resource: str) -> tuple[Connection, str]:
    """The connection and access an OAuth access token carries, checked: issued here for a connection,
    unexpired, bound to `resource` (this server's /v1/mcp), and still allowed. Raises InvalidToken."""
    checksum = hashlib.sha256(raw_token.encode()).hexdigest()  # DOT stores only this checksum
    token = (OAuthAccessToken.objects
             .select_related("connection__user", "connection__project", "connection__end_user",
                             "connection__application")
             .filter(token_checksum=checksum).first())
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
    return (Connection.objects.filter(user=user, revoked_at__isnull=True)
            .select_related("application", "project", "end_user").order_by("-created_at", "-pk"))


def connections_of_project(*, project: Project):
    """Every live connection to a project's memory, whoever granted it, newest first."""
    return (Connection.objects.filter(project=project, revoked_at__isnull=True)
            .select_related("application", "user", "end_user").order_by("-created_at", "-pk"))


def connection_of_user(*, user: User, pk: int) -> Connection | None:
    """One of a person's live connections; None for not found and not theirs alike."""
    return connections_of_user(user=user).filter(pk=pk).first()


def connection_of_project(*, project: Project, pk: int) -> Connection | None:
    """One live connection of a project; None for not found and another project's alike."""
    return connections_of_project(project=project).filter(pk=pk).first()


def project_for_connection_admin(*, user: User, slug: str) -> Project | None:
    """The project, if `user` may see and disconnect all of its connections; None for not found and not yours."""
    membership = Membership.objects.filter(
        user=user, project__slug=slug, role__in=ROLES_SEEING_PROJECT_CONNECTIONS).select_related("project").first()
    return membership.project if membership else None


# --- Dynamic client registration (RFC 7591) -------------------------------------------------------------

REGISTRATION_BODY_MAX = 16 * 1024  # bytes
REDIRECT_URIS_MAX = 10
REDIRECT_URI_MAX = 2000
CLIENT_NAME_MAX = 200
TOKEN_ENDPOINT_AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
GRANT_TYPES = ("authorization_code", "refresh_token")
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


class RegistrationError(Exception):
    """RFC 7591 §3.2.2: `error` is invalid_redirect_uri or invalid_client_metadata."""

    def __init__(self, error: str, description: str):
        super().__init__(description)
        self.error, self.description = error, description


def redirect_uri_problem(uri) -> str | None:
    """Why a redirect URI cannot be registered, or None: https, or http on a loopback address (RFC 8252)."""
    if not isinstance(uri, str) or not uri:
        return "Each redirect URI must be a non-empty string."
    if len(uri) > REDIRECT_URI_MAX:
        return f"A redirect URI is {len(uri)} characters; at most {REDIRECT_URI_MAX}."
    parts = urlsplit(uri)
    try:
        parts.port
    except ValueError:
        return f"{uri} has an invalid port."
    if "#" in uri or "@" in parts.netloc:
        return f"{uri} must have no fragment and no user information."
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS:
        return None
    return f"{uri} must be https, or http on a loopback address (127.0.0.1, [::1] or localhost)."


def _string_list(metadata: dict, name: str, default: list) -> list[str]:
    value = metadata.get(name, default)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RegistrationError("invalid_client_metadata", f"{name} must be an array of strings.")
    return value


@transaction.atomic
def oauth_client_register(*, metadata) -> dict:
    """Register a client (RFC 7591) for the authorization code flow with PKCE; returns the registration.

    A public client (token_endpoint_auth_method "none") gets no secret; a confidential one
    (client_secret_post or client_secret_basic, the default) gets a secret, shown only in this answer and
    stored hashed. Unknown metadata is ignored, null reads as absent, and scope is narrowed to the scopes
    served here.
    """
    if not isinstance(metadata, dict):
        raise RegistrationError("invalid_client_metadata", "The body must be a JSON object.")
    metadata = {name: value for name, value in metadata.items() if value is not None}  # null reads as absent
    redirect_uris = _string_list(metadata, "redirect_uris", [])
    if not redirect_uris:
        raise RegistrationError("invalid_redirect_uri", "redirect_uris is required.")
    if len(redirect_uris) > REDIRECT_URIS_MAX:
        raise RegistrationError("invalid_redirect_uri", f"At most {REDIRECT_URIS_MAX} redirect_uris.")
    for uri in redirect_uris:
        if problem := redirect_uri_problem(uri):
            raise RegistrationError("invalid_redirect_uri", problem)
    grant_types = _string_list(metadata, "grant_types", ["authorization_code"])
    if "authorization_code" not in grant_types or not set(grant_types) <= set(GRANT_TYPES):
        raise RegistrationError("invalid_client_metadata", "grant_types may be authorization_code and refresh_token.")
    if _string_list(metadata, "response_types", ["code"]) != ["code"]:
        raise RegistrationError("invalid_client_metadata", 'response_types must be ["code"].')
    method = metadata.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in TOKEN_ENDPOINT_AUTH_METHODS:
        raise RegistrationError(
            "invalid_client_metadata", f"token_endpoint_auth_method may be {', '.join(TOKEN_ENDPOINT_AUTH_METHODS)}.")
    name = metadata.get("client_name", "")
    if not isinstance(name, str) or len(name) > CLIENT_NAME_MAX:
        raise RegistrationError(
            "invalid_client_metadata", f"client_name must be a string of at most {CLIENT_NAME_MAX} characters.")
    requested = metadata.get("scope")
    served = list(ACCESS_SCOPES[Access.WRITE])
    scopes = [s for s in requested.split() if s in served] if isinstance(requested, str) else []

    secret = generate_client_secret()
    application = OAuthApplication(
        name=name.strip(), redirect_uris=" ".join(redirect_uris), client_secret=secret,
        client_type=OAuthApplication.CLIENT_PUBLIC if method == "none" else OAuthApplication.CLIENT_CONFIDENTIAL,
        authorization_grant_type=OAuthApplication.GRANT_AUTHORIZATION_CODE,
        registration_source=OAuthApplication.RegistrationSource.DCR,
    )
    try:
        application.full_clean()
    except ValidationError as invalid:
        raise RegistrationError("invalid_client_metadata", " ".join(invalid.messages)) from None
    application.save()
    registration = {
        "client_id": application.client_id,
        "client_id_issued_at": int(application.created.timestamp()),
        "client_name": application.name,
        "redirect_uris": redirect_uris,
        "grant_types": list(GRANT_TYPES),
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "scope": " ".join(scopes or served),
    }
    if method != "none":
        registration.update(client_secret=secret, client_secret_expires_at=0)
    return registration


# --- The validator: django-oauth-toolkit's seam ---------------------------------------------------------


class TwinOAuth2Validator(OAuth2Validator):
    """OAUTH2_VALIDATOR_CLASS: carries the connection from the code to the tokens and through rotation,
    refuses codes and refresh tokens of a connection that has ended, caps a refresh token's life at
    REFRESH_TOKEN_EXPIRE_SECONDS from its issue, and ends the whole connection when a rotated refresh token
    is presented again (or revoked by its client)."""

    def validate_code(self, client_id, code, client, request, *args, **kwargs):
        used = OAuthGrant.objects.filter(code=code, application=client, used_at__isnull=False).first()
        if used is not None:
            # RFC 6749 §4.1.2: a code presented twice has leaked; the tokens it issued are revoked with it.
            if used.connection is not None:
                connection_revoke(connection=used.connection)
            return False
        if not super().validate_code(client_id, code, client, request, *args, **kwargs):
            return False
        grant = OAuthGrant.objects.select_related("connection__user").get(code=code, application=client)
        if grant.connection is None or connection_access(grant.connection) is None:
            return False
        request.connection = grant.connection
        return True

    def invalidate_authorization_code(self, client_id, code, request, *args, **kwargs):
        """Mark the code used instead of deleting it (the toolkit's way), so validate_code knows it again.
        Only one exchange can mark it: of two at once, the second is refused."""
        marked = OAuthGrant.objects.filter(code=code, application=request.client, used_at__isnull=True).update(
            used_at=timezone.now())
        if not marked:
            raise InvalidGrantError(request=request)

    def validate_refresh_token(self, refresh_token, client, request, *args, **kwargs):
        valid = super().validate_refresh_token(refresh_token, client, request, *args, **kwargs)
        checksum = hashlib.sha256(refresh_token.encode()).hexdigest()
        presented = (OAuthRefreshToken.objects.filter(token_checksum=checksum, application=client)
                     .select_related("connection__user").order_by("-created").first())
        if presented is None or presented.connection is None:
            return False
        if not valid:
            if presented.revoked is not None:  # a rotated (or revoked) token presented again: a leak
                connection_revoke(connection=presented.connection)
            return False
        lifetime = oauth2_settings.REFRESH_TOKEN_EXPIRE_SECONDS
        if (timezone.now() - presented.created).total_seconds() >= lifetime:
            return False
        if connection_access(presented.connection) is None:
            return False
        request.connection = presented.connection
        return True

    def _link(self, model, instance, request):
        connection = getattr(request, "connection", None)
        if connection is not None:
            model.objects.filter(pk=instance.pk).update(connection=connection)
            instance.connection = connection
        return instance

    def _create_authorization_code(self, request, code, expires=None):
        return self._link(OAuthGrant, super()._create_authorization_code(request, code, expires), request)

    def _create_access_token(self, expires, request, token, source_refresh_token=None):
        access_token = super()._create_access_token(expires, request, token, source_refresh_token)
        return self._link(OAuthAccessToken, access_token, request)

    def _create_refresh_token(self, request, refresh_token_code, access_token, previous_refresh_token):
        refresh_token = super()._create_refresh_token(request, refresh_token_code, access_token, previous_refresh_token)
        return self._link(OAuthRefreshToken, refresh_token, request)

    def revoke_token(self, token, token_type_hint, request, *args, **kwargs):
        """RFC 7009: a client revoking its token signs out, so its whole connection ends."""
        checksum = hashlib.sha256(token.encode()).hexdigest()
        application_pk = getattr(request.client, "pk", None)
        connection_ids = set()
        for model in (OAuthAccessToken, OAuthRefreshToken):
            connection_ids.update(model.objects.filter(
                token_checksum=checksum, application_id=application_pk, connection__isnull=False,
            ).values_list("connection_id", flat=True))
        super().revoke_token(token, token_type_hint, request, *args, **kwargs)
        for connection in Connection.objects.filter(pk__in=connection_ids):
            connection_revoke(connection=connection)
