"""The request context: one authentication step for every /v1/ route.

Two credentials. `Authorization: Bearer tm_…` is an API key: it names a project and an access, and
`X-Twin-Account` names the end user. Any other bearer is an OAuth access token: its connection names the
project, the end user and the access, and X-Twin-Account is ignored. Everything after this step reads the
Context, never the headers, so tenancy comes from the credential alone.
"""

from dataclasses import dataclass
from http import HTTPStatus

from rest_framework.authentication import BaseAuthentication

from . import keycache
from .connections import InvalidToken, connection_for_access_token, connection_touch
from .errors import ApiError
from .models import END_USER_ID_MAX, END_USER_ID_PATTERN, Access, ApiKey, Connection, EndUser, Project
from .ratelimit import admit, redis_paused
from .resource import mcp_resource_url
from .services import KEY_PREFIX, api_key_touch, end_user_get_or_create, hash_key

ACCOUNT_HEADER = "X-Twin-Account"


@dataclass
class Context:
    """Whose memory a request reaches, and how far."""

    project: Project
    account: str  # the end user's id, as the caller named it
    access: str  # Access.READ or Access.WRITE
    api_key: ApiKey | None = None
    connection: Connection | None = None  # set when the request came with an OAuth access token
    _end_user: EndUser | None = None

    @property
    def can_write(self) -> bool:
        return self.access == Access.WRITE

    @property
    def via(self) -> str:
        """How the request was authenticated: "key" or "oauth"."""
        return "oauth" if self.connection is not None else "key"

    @property
    def end_user_known(self) -> bool:
        """Whether the end user is at hand without a lookup (an OAuth connection names it)."""
        return self._end_user is not None

    def end_user(self, *, create: bool = False) -> EndUser | None:
        """The end user; None for one never written to, unless `create` (first write creates it)."""
        if self._end_user is None:
            if create:
                self._end_user = end_user_get_or_create(project=self.project, external_id=self.account)
            else:
                self._end_user = EndUser.objects.filter(project=self.project, external_id=self.account).first()
        return self._end_user

    def as_dict(self) -> dict:
        end_user = self.end_user()
        return {
            "project": {"slug": self.project.slug, "name": self.project.name},
            "end_user": {"id": self.account, "exists": end_user is not None},
            "access": self.access,
            "key": {"prefix": self.api_key.prefix, "name": self.api_key.name} if self.api_key else None,
            "connection": {"app": self.connection.application.name, "id": self.connection.pk}
            if self.connection
            else None,
        }


def unauthorized(error: str, message: str) -> ApiError:
    return ApiError(HTTPStatus.UNAUTHORIZED, error, message)


def bearer_token(request) -> str | None:
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def parse_account(value: str | None) -> str:
    """The X-Twin-Account value, checked: 1 to 128 letters, digits and _ - . : @."""
    if value is None or value == "":
        raise ApiError(
            HTTPStatus.BAD_REQUEST,
            "missing_account",
            f"The {ACCOUNT_HEADER} header is required: it names the end user.",
            field=ACCOUNT_HEADER,
        )
    if len(value) > END_USER_ID_MAX:
        raise ApiError(
            HTTPStatus.BAD_REQUEST,
            "invalid_account",
            f"{ACCOUNT_HEADER} is {len(value)} characters; at most {END_USER_ID_MAX}.",
            field=ACCOUNT_HEADER,
            bound=END_USER_ID_MAX,
        )
    if not END_USER_ID_PATTERN.match(value):
        raise ApiError(
            HTTPStatus.BAD_REQUEST,
            "invalid_account",
            f"{ACCOUNT_HEADER} may hold only letters, digits and _ - . : @ (1 to {END_USER_ID_MAX} characters).",
            field=ACCOUNT_HEADER,
        )
    return value


def context_from_request(request) -> Context:
    """Authenticate a request into a Context, or raise ApiError (401 for the credential, 400 for the account,
    429 over the credential's rate limits: the one place they are applied, accounts/ratelimit.py).

    A key in this process's cache (accounts/keycache.py) is checked in the rate limiter's round trip to
    Redis and read from the database again only when it changed; any other is read from the database."""
    token = bearer_token(request)
    if token is None:
        raise unauthorized("missing_key", "Send Authorization: Bearer <key>.")
    if not token.startswith(KEY_PREFIX):
        return admit(request, _oauth_context(request, token))
    key_hash = hash_key(token)
    found = keycache.cached(key_hash)
    if found is not None:
        try:
            context = _key_context(request, found.key)
        except ApiError:  # answered as without the cache: the key read first, then the account
            found = None
    if found is None:
        generation, answered = (None, False) if redis_paused() else keycache.read_generation(key_hash)
        return admit(request, _key_context(request, keycache.load(key_hash, generation, cache=answered)))

    def check(generation: str | None, answered: bool) -> Context:
        if answered and generation is not None and generation == found.generation:
            return context
        return _key_context(request, keycache.load(key_hash, generation, cache=answered))

    return admit(request, context, check=(keycache.generation_key(key_hash), check))


def _oauth_context(request, token: str) -> Context:
    try:
        connection, access = connection_for_access_token(token, resource=mcp_resource_url(request))
    except InvalidToken as refused:
        raise unauthorized("invalid_token", str(refused)) from None
    connection_touch(connection=connection)
    return Context(
        project=connection.project,
        account=connection.end_user.external_id,
        access=access,
        connection=connection,
        _end_user=connection.end_user,
    )


def _key_context(request, key: ApiKey | None) -> Context:
    if key is None:
        raise unauthorized("invalid_key", "That key is not one this service issued.")
    if key.revoked_at is not None:
        raise unauthorized("revoked_key", "That key has been revoked.")
    account = parse_account(request.META.get("HTTP_X_TWIN_ACCOUNT"))
    api_key_touch(key=key)
    return Context(project=key.project, account=account, access=key.access, api_key=key)


class ContextAuthentication(BaseAuthentication):
    """DRF's door to context_from_request: request.auth is the Context."""

    def authenticate(self, request):
        return (None, context_from_request(request._request))

    def authenticate_header(self, request):
        return "Bearer"
