"""API keys: the list (name, access, prefix, created by, created, last used), create (shown once, with a copy
button, a curl line, the Python and TypeScript clients' lines and MCP client snippets) and revoke with
confirmation. Viewers neither see nor make keys."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts.resource import MCP_RESOURCE_PATH, mcp_resource_url
from accounts.selectors import api_key_of_project, api_keys_of_project
from accounts.services import api_key_create, api_key_revoke

from .access import NOT_FOUND, project_for
from .clients import client_configs, curl_line, python_lines, typescript_lines
from .forms import KeyForm
from .forms_flow import project_form_post
from .security import console_page


def _page(request, project, *, form=None):
    return render(
        request,
        "console/keys.html",
        {"project": project, "keys": api_keys_of_project(project=project), "form": form or KeyForm()},
    )


@console_page
@login_required
def keys(request, slug: str):
    return _page(request, project_for(request, slug, "view_keys"))


@console_page
@require_POST
@login_required
def create(request, slug: str):
    """Mint a key and show it this once: the answer to the POST is the only page that ever holds it (nothing
    keeps it, not even the session), so reloading the list never shows it again."""
    return project_form_post(
        request,
        slug,
        "manage_keys",
        KeyForm,
        act=lambda project, data: _created(request, project, data),
        page=lambda project, form: _page(request, project, form=form),
    )


def _created(request, project, data: dict):
    key, raw = api_key_create(
        project=project, access=data["access"], name=data["name"].strip(), created_by=request.user
    )
    mcp_url = mcp_resource_url(request)
    base_url = mcp_url.rsplit(MCP_RESOURCE_PATH, 1)[0]
    clients = [c for c in client_configs(mcp_url, key=raw) if not c.get("oauth")]
    return render(
        request,
        "console/key_created.html",
        {
            "project": project,
            "key": key,
            "raw": raw,
            "curl": curl_line(base_url, key=raw),
            "python": python_lines(base_url, key=raw),
            "typescript": typescript_lines(base_url, key=raw),
            "clients": clients,
        },
    )


@console_page
@login_required
def revoke(request, slug: str, pk: int):
    """GET: the confirmation. POST: revoke; the key fails on its very next use."""
    project = project_for(request, slug, "manage_keys")
    key = api_key_of_project(project=project, pk=pk)
    if key is None:
        raise Http404(NOT_FOUND)
    if request.method != "POST":
        return render(request, "console/key_revoke.html", {"project": project, "key": key})
    api_key_revoke(key=key)
    messages.success(request, f"Revoked {key.name or key.prefix}: it no longer works.")
    return redirect("console:keys", slug=project.slug)
