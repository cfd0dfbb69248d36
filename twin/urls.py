from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from accounts.views import MeView, healthz
from mcp.views import mcp_endpoint

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("v1/me", MeView.as_view(), name="me"),
    path("v1/schema", SpectacularAPIView.as_view(), name="schema"),
    path("v1/docs", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("v1/mcp", mcp_endpoint, name="mcp"),
    path("", include("memory.urls")),
]
