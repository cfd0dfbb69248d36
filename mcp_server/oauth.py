"""OAuth discovery and client registration for /v1/mcp: how claude.ai and ChatGPT find the sign-in.

- /.well-known/oauth-protected-resource/v1/mcp (RFC 9728; the root form answers the same document): the
  resource is this server's /v1/mcp, the authorization server is this server's issuer.
- /.well-known/oauth-authorization-server (RFC 8414): django-oauth-toolkit's own view, shaped by the
  OAUTH2_PROVIDER settings (S256 only, the iss response parameter, the registration endpoint).
- /oauth/register (RFC 7591): open dynamic client registration, bounded in size and rate-limited by address.

The authorize endpoint is the consent card (console.consent); token and revoke are the toolkit's views.
"""

from http import HTTPStatus

from django.conf import settings
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from oauth2_provider import views as toolkit
from oauth2_provider.views import OAuthProtectedResourceMetadataView, OAuthServerMetadataView

from accounts import throttle
from accounts.registration import REGISTRATION_BODY_MAX, RegistrationError, oauth_client_register
from accounts.resource import mcp_resource_url
from twin import json_limits

REGISTRATION_WINDOW_SECONDS = 60  # the window OAUTH_REGISTRATIONS_PER_MINUTE counts in: a minute

__all__ = ["OAuthServerMetadataView", "ProtectedResourceMetadataView", "TokenView", "register"]


class ProtectedResourceMetadataView(OAuthProtectedResourceMetadataView):
    """RFC 9728 for /v1/mcp, at both the path form and the root form of the well-known URL."""

    def get_resource(self, request):
        return mcp_resource_url(request)


class TokenView(toolkit.TokenView):
    """/oauth/token: the toolkit's, with every answer JSON and never cached (RFC 6749 §5.1-5.2), including the
    errors it raises while saving tokens (invalid_target), which it otherwise sends without a content type."""

    def post(self, request, *args, **kwargs):
        response = super().post(request, *args, **kwargs)
        if response["Content-Type"].startswith("text/html"):
            response["Content-Type"] = "application/json"
        response["Cache-Control"] = "no-store"
        return response


def _oauth_error(status: int, error: str, description: str, **extra) -> JsonResponse:
    response = JsonResponse({"error": error, "error_description": description, **extra}, status=status)
    response["Cache-Control"] = "no-store"
    return response


@csrf_exempt  # an API for programs, sent without cookies
@require_POST
def register(request):
    """POST /oauth/register: RFC 7591 dynamic client registration, for public and confidential clients."""
    retry_after = throttle.attempt(
        "oauth-register",
        throttle.client_address(request),
        settings.OAUTH_REGISTRATIONS_PER_MINUTE,
        REGISTRATION_WINDOW_SECONDS,
    )
    if retry_after is not None:
        response = _oauth_error(
            HTTPStatus.TOO_MANY_REQUESTS, "too_many_requests", "Too many registrations from this address; retry later."
        )
        response["Retry-After"] = str(retry_after)
        return response
    size = int(request.META.get("CONTENT_LENGTH") or 0)  # checked before the body is read (a number: middleware)
    if size <= REGISTRATION_BODY_MAX:
        size = len(request.body)
    if size > REGISTRATION_BODY_MAX:
        return _oauth_error(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
            "invalid_client_metadata",
            f"The registration is {size} bytes; at most {REGISTRATION_BODY_MAX}.",
        )
    try:
        metadata = json_limits.loads(request.body)
    except json_limits.InvalidJson as bad:
        return _oauth_error(
            HTTPStatus.BAD_REQUEST, "invalid_client_metadata", f"The body must be JSON. {bad}", field="body"
        )
    unreadable = json_limits.lone_surrogate_at(metadata)
    if unreadable:
        return _oauth_error(
            HTTPStatus.BAD_REQUEST,
            "invalid_client_metadata",
            f"{unreadable}: not valid Unicode (a lone surrogate).",
            field=unreadable,
        )
    try:
        registration = oauth_client_register(metadata=metadata)
    except RegistrationError as refused:
        return _oauth_error(HTTPStatus.BAD_REQUEST, refused.error, refused.description, field=refused.field)
    response = JsonResponse(registration, status=HTTPStatus.CREATED)
    response["Cache-Control"] = "no-store"
    return response
