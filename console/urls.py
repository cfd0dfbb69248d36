"""The console's pages. The consent card lives at /oauth/authorize, wired with the OAuth endpoints."""

from django.urls import path

from . import views

app_name = "console"

urlpatterns = [
    path("login", views.LoginView.as_view(), name="login"),
    path("logout", views.LogoutView.as_view(), name="logout"),
    path("account/apps", views.account_apps, name="account-apps"),
    path("account/apps/<int:pk>/disconnect", views.account_app_disconnect, name="account-app-disconnect"),
    path("projects/<slug:slug>/mcp", views.project_mcp, name="project-mcp"),
    path("projects/<slug:slug>/mcp/<int:pk>/disconnect", views.project_mcp_disconnect, name="project-mcp-disconnect"),
]
