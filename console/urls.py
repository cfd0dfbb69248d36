"""The console's pages. The consent card lives at /oauth/authorize, wired with the OAuth endpoints."""

from django.urls import path

from . import end_users, keys, members, playground, portability, signup, usage, views

app_name = "console"

P = "projects/<slug:slug>"

urlpatterns = [
    path("", views.home, name="home"),
    # Accounts: sign up, log in and out, password reset.
    path("signup", signup.signup, name="signup"),
    path("signup/sent", signup.signup_sent, name="signup-sent"),
    path("signup/<str:token>", signup.signup_finish, name="signup-confirm"),
    path("login", views.LoginView.as_view(), name="login"),
    path("logout", views.LogoutView.as_view(), name="logout"),
    path("password-reset", views.PasswordResetView.as_view(), name="password-reset"),
    path("password-reset/sent", views.PasswordResetDoneView.as_view(), name="password-reset-done"),
    path("reset/<uidb64>/<token>", views.PasswordResetConfirmView.as_view(), name="password-reset-confirm"),
    path("reset/done", views.PasswordResetCompleteView.as_view(), name="password-reset-complete"),
    path("account/apps", views.account_apps, name="account-apps"),
    path("account/apps/<int:pk>/disconnect", views.account_app_disconnect, name="account-app-disconnect"),
    path("invitations/<str:token>", members.invitation, name="invitation"),
    # Projects.
    path("projects", views.projects, name="projects"),
    path("projects/new", views.project_new, name="project-new"),
    path(f"{P}", views.project_overview, name="project"),
    path(f"{P}/settings", views.project_settings, name="project-settings"),
    path(f"{P}/rename", views.project_rename, name="project-rename"),
    path(f"{P}/limits", views.project_limits, name="project-limits"),
    path(f"{P}/secrets", views.project_secrets, name="project-secrets"),
    path(f"{P}/delete", views.project_delete, name="project-delete"),
    # Members and invitations.
    path(f"{P}/members", members.members, name="members"),
    path(f"{P}/members/invite", members.invite, name="member-invite"),
    path(f"{P}/members/<int:pk>/role", members.change_role, name="member-role"),
    path(f"{P}/members/<int:pk>/remove", members.remove, name="member-remove"),
    path(f"{P}/invitations/<int:pk>/revoke", members.invitation_revoke, name="invitation-revoke"),
    # API keys.
    path(f"{P}/keys", keys.keys, name="keys"),
    path(f"{P}/keys/new", keys.create, name="key-create"),
    path(f"{P}/keys/<int:pk>/revoke", keys.revoke, name="key-revoke"),
    # End users and their memory.
    path(f"{P}/end-users", end_users.end_users, name="end-users"),
    path(f"{P}/end-users/<str:account>", end_users.end_user, name="end-user"),
    path(f"{P}/end-users/<str:account>/forget", end_users.forget, name="end-user-forget"),
    path(f"{P}/end-users/<str:account>/export", portability.export, name="end-user-export"),
    path(f"{P}/end-users/<str:account>/import", portability.import_, name="end-user-import"),
    path(f"{P}/end-users/<str:account>/import/<str:job>", portability.import_job, name="end-user-import-job"),
    # MCP, usage, playground.
    path(f"{P}/mcp", views.project_mcp, name="project-mcp"),
    path(f"{P}/mcp/<int:pk>/disconnect", views.project_mcp_disconnect, name="project-mcp-disconnect"),
    path(f"{P}/usage", usage.usage, name="usage"),
    path(f"{P}/playground", playground.page, name="playground"),
    path(f"{P}/playground/run", playground.run, name="playground-run"),
]
