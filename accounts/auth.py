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
from .ratelimit import admit, count, judge, redis_paused
from .resource import mcp_resource_url
from .selectors import end_user_of_project
from .services import KEY_PREFIX, api_key_touch, hash_key

ACCOUNT_HEADER = "X-Twin-Account"


@dataclass
class Context:
    """Whose memory a request reaches, and how far."""

    project: Project
    account: str  # the end user's id, as the caller named it
    access: str  # Access.READ or Access.WRITE
    api_key: ApiKey | None = None
    connection: Connection | None = None  # set when the request came with an OAuth access token
    end_user: EndUser | None = None  # set when the credential names the end user's row (an OAuth connection)

    @property
    def can_write(self) -> bool:
        return self.access == Access.WRITE

    def as_dict(self) -> dict:
        exists = (
            self.end_user is not None or end_user_of_project(project=self.project, external_id=self.account) is not None
        )
        return {
            "project": {"slug": self.project.slug, "name": self.project.name},
            "end_user": {"id": self.account, "exists": exists},
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

    The limiter is asked once, after the credential is known. A key in this process's cache
    (accounts/keycache.py) is checked in the limiter's round trip to Redis, which reads its generation too,
    and read from the database again only when it changed; any other key is read from the database."""
    token = bearer_token(request)
    if token is None:
        raise unauthorized("missing_key", "Send Authorization: Bearer <key>.")
    if not token.startswith(KEY_PREFIX):
        oauth_context = _oauth_context(request, token)
        admit(request, oauth_context)
        return oauth_context
    key_hash = hash_key(token)
    cached = keycache.cached(key_hash)
    try:
        context = _key_context(request, cached.key) if cached is not None else None
    except ApiError:  # answered as without the cache: the key read first, then the account
        context = None
    if cached is None or context is None:
        context = _key_context(request, _key_from_database(key_hash))
        admit(request, context)
        return context
    # One round trip counts the request and reads the cached key's generation: a key changed since it was
    # cached (or whose generation Redis cannot say) is read again before the request is judged.
    counted = count(context, also_read=keycache.generation_key(key_hash))
    if counted.read is None or counted.read != cached.generation:
        context = _key_context(request, keycache.load(key_hash, counted.read, cache=not redis_paused()))
    judge(request, context, counted)
    return context


def _key_from_database(key_hash: str) -> ApiKey | None:
    """The key read from the database, cached under the generation Redis holds for it now (read first, so a
    change made meanwhile is seen on the next request); uncached when Redis is not answering."""
    if redis_paused():
        return keycache.load(key_hash, None, cache=False)
    generation, answered = keycache.read_generation(key_hash)
    return keycache.load(key_hash, generation, cache=answered)


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
        end_user=connection.end_user,
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
