"""django-oauth-toolkit's seam: the validator (OAUTH2_VALIDATOR_CLASS) that ties every code and token to the
Connection it was issued for, and ends the connection when a code or refresh token leaks."""

from django.utils import timezone
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.settings import oauth2_settings
from oauthlib.oauth2.rfc6749.errors import InvalidGrantError

from .connections import connection_access, connection_revoke, token_checksum
from .models import Connection, OAuthAccessToken, OAuthGrant, OAuthRefreshToken


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
            used_at=timezone.now()
        )
        if not marked:
            raise InvalidGrantError(request=request)

    def validate_refresh_token(self, refresh_token, client, request, *args, **kwargs):
        valid = super().validate_refresh_token(refresh_token, client, request, *args, **kwargs)
        presented = (
            OAuthRefreshToken.objects.filter(token_checksum=token_checksum(refresh_token), application=client)
            .select_related("connection__user")
            .order_by("-created")
            .first()
        )
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
        checksum = token_checksum(token)
        application_pk = getattr(request.client, "pk", None)
        connection_ids = set()
        for model in (OAuthAccessToken, OAuthRefreshToken):
            connection_ids.update(
                model.objects.filter(
                    token_checksum=checksum,
                    application_id=application_pk,
                    connection__isnull=False,
                ).values_list("connection_id", flat=True)
            )
        super().revoke_token(token, token_type_hint, request, *args, **kwargs)
        for connection in Connection.objects.filter(pk__in=connection_ids):
            connection_revoke(connection=connection)
