"""How the OpenAPI schema (drf-spectacular) describes the request context's credentials.

Every /v1/memory/* route takes `Authorization: Bearer <key or OAuth access token>` and, with a key,
`X-Twin-Account: <end user>`; both are one security requirement, so a client generated from the schema (and
schemathesis, in the test suite) sends them together.
"""

from drf_spectacular.extensions import OpenApiAuthenticationExtension

from .auth import ACCOUNT_HEADER
from .models import END_USER_ID_MAX


class ContextAuthenticationScheme(OpenApiAuthenticationExtension):
    """accounts.auth.ContextAuthentication as two schemes required together: the bearer and the end user."""

    target_class = "accounts.auth.ContextAuthentication"
    name = ["bearer", "endUser"]

    def get_security_definition(self, auto_schema):
        return [
            {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "tm_… key or OAuth access token",
                "description": "An API key (tm_…): a read key, or a read and write key. Or an OAuth access token "
                "from the sign-in, which names its end user itself.",
            },
            {
                "type": "apiKey",
                "in": "header",
                "name": ACCOUNT_HEADER,
                "description": f"The end user whose memory the call reaches: 1 to {END_USER_ID_MAX} letters, "
                "digits and _ - . : @. Read with a key; an OAuth token fixes the end user instead.",
            },
        ]
