from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from oauth2_provider.views import RevokeTokenView

from accounts.views import MeView, healthz
from console.consent import ConsentView
from mcp_server import oauth
from mcp_server.views import mcp_endpoint
from twin.metrics import metrics_view
from twin.readiness import readyz

# Sign-in (OAuth). The names are django-oauth-toolkit's, in its namespace, so its metadata view finds them.
oauth_patterns = (
    [
        path(
            ".well-known/oauth-authorization-server",
            oauth.OAuthServerMetadataView.as_view(),
            name="oauth-server-metadata",
        ),
        path(
            ".well-known/oauth-protected-resource",
            oauth.ProtectedResourceMetadataView.as_view(),
            name="oauth-resource-metadata",
        ),
        path(
            ".well-known/oauth-protected-resource/v1/mcp",
            oauth.ProtectedResourceMetadataView.as_view(),
            name="oauth-resource-metadata-mcp",
        ),
        path("oauth/authorize", ConsentView.as_view(), name="authorize"),
        path("oauth/token", oauth.TokenView.as_view(), name="token"),
        path("oauth/revoke", RevokeTokenView.as_view(), name="revoke-token"),
        path("oauth/register", oauth.register, name="dcr-register"),
    ],
    "oauth2_provider",
)

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics_view, name="metrics"),
    path("readyz", readyz, name="readyz"),
    path("v1/me", MeView.as_view(), name="me"),
    path("v1/schema", SpectacularAPIView.as_view(), name="schema"),
    path("v1/docs", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("v1/mcp", mcp_endpoint, name="mcp"),
    path("", include(oauth_patterns)),
    path("", include("console.urls")),
    path("", include("memory.routes.urls")),
]
