"""The consent card at /oauth/authorize: the app asking, whose memory it reaches, and how far.

django-oauth-toolkit's AuthorizationView runs the protocol; this subclass adds what twin memory decides:
PKCE S256 only, the resource (RFC 8707) bound to this server's /v1/mcp, the card's choices (project, end
user, access) checked against the person's role, the Connection they become, and `iss` (RFC 9207) on
every answer sent back to the app, errors included. An app signing in by Client ID Metadata Document is shown
with the name its document gives and the host that published it.
"""

import json
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django import forms
from django.core.signing import Signer
from django.db import transaction
from django.utils.crypto import constant_time_compare
from django.utils.decorators import method_decorator
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.forms import AllowForm
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import AuthorizationView
from oauthlib.oauth2.rfc6749 import errors

from accounts.connections import own_end_user_id
from accounts.consent import (
    ACCESS_LABELS,
    ConsentError,
    connection_grant,
    consent_memberships,
    consent_resolve,
    scope_for_access,
)
from accounts.models import END_USER_ID_MAX, Access, OAuthApplication
from accounts.permissions import can, roles_with, roles_without
from accounts.registration import client_host
from accounts.resource import mcp_resource_url, resource_is
from accounts.scopes import SCOPE_WRITE

from .security import console_page

ASKED_SALT = "console.consent.asked"


def asked_signature(*, client_id: str, code_challenge: str, scope: str) -> str:
    """The server's signature of the scope an app asked for in one authorization request (named by its
    client_id and PKCE challenge), carried by the card as a hidden field beside the scope: the card's answer
    grants at most what that scope allows only when the signature still matches, so a person (or a script in
    their browser) cannot widen it by editing the hidden scope."""
    return Signer(salt=ASKED_SALT).signature(json.dumps([client_id, code_challenge, scope]))


def asked_unaltered(data) -> bool:
    """Whether a posted card's client_id, code_challenge and scope are those its GET signed."""
    expected = asked_signature(
        client_id=data.get("client_id", ""), code_challenge=data.get("code_challenge", ""), scope=data.get("scope", "")
    )
    return constant_time_compare(expected, data.get("asked", ""))


def offered_accesses(requested_scope: str) -> list[str]:
    """The accesses the card offers: Read and save only when the app asked for memory:write."""
    return [Access.WRITE, Access.READ] if SCOPE_WRITE in requested_scope.split() else [Access.READ]


def with_iss(uri: str, issuer: str) -> str:
    """`uri` carrying the authorization server's issuer as `iss` (RFC 9207), once."""
    parts = urlsplit(uri)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "iss"] + [("iss", issuer)]
    return urlunsplit(parts._replace(query=urlencode(query)))


def _plural_list(words: list[str]) -> str:
    return " and ".join([", ".join(words[:-1]), words[-1]]) if len(words) > 1 else "".join(words)


def _roles_plural(roles) -> str:
    """Roles as the card words them: "Owners, Admins and Members"."""
    return _plural_list([role.label + "s" for role in roles])


class AccessChoice(str):
    """An access's label on the card, carrying the scopes it grants (`choice.choice_label.scopes`)."""

    scopes: str

    def __new__(cls, access: str):
        choice = super().__new__(cls, ACCESS_LABELS[access])
        choice.scopes = scope_for_access(access)
        return choice


class ConsentForm(AllowForm):
    """DOT's hidden fields, plus the card's three choices. The choices are checked only when allowing."""

    project = forms.CharField(required=False, widget=forms.Select)
    end_user = forms.CharField(required=False, max_length=END_USER_ID_MAX)
    access = forms.CharField(required=False, widget=forms.RadioSelect)
    asked = forms.CharField(required=False, widget=forms.HiddenInput)  # asked_signature

    def __init__(self, *args, user, offered: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.user, self.offered = user, offered
        self.memberships = consent_memberships(user=user)
        self.fields["project"].widget.choices = [(m.project.slug, m.project.name) for m in self.memberships]
        # A person who is a Viewer everywhere is offered Read only; for a mixed set, the card's script turns
        # Read and save off while a Viewer's project is chosen, and consent_resolve checks it either way.
        if not any(can(m.role, "grant_write") for m in self.memberships):
            offered = self.offered = [access for access in offered if access != Access.WRITE] or offered
        self.fields["access"].widget.choices = [(access, AccessChoice(access)) for access in offered]
        if self.memberships:
            first = self.memberships[0]
            self.initial.setdefault("project", first.project.slug)
            can_write = Access.WRITE in offered and can(first.role, "grant_write")
            self.initial.setdefault("access", Access.WRITE if can_write else Access.READ)
        self.initial.setdefault("end_user", own_end_user_id(user))

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("allow"):
            return cleaned  # Cancel: nothing to check, the app hears access_denied
        try:
            project, end_user_id, access = consent_resolve(
                user=self.user,
                project_slug=cleaned.get("project") or "",
                end_user_id=cleaned.get("end_user") or "",
                access=cleaned.get("access") or "",
                offered=self.offered,
            )
        except ConsentError as refused:
            self.add_error(refused.field, refused.message)
            return cleaned
        cleaned.update(project=project, end_user=end_user_id, access=access)
        return cleaned


@method_decorator(console_page, name="dispatch")
class ConsentView(AuthorizationView):
    """GET shows the card (after the console's log-in); POST turns the person's choices into a code."""

    template_name = "console/consent.html"
    form_class = ConsentForm

    def get(self, request, *args, **kwargs):
        if "approval_prompt" in request.GET:  # the toolkit's "auto" would skip the card: the card is always shown
            request.GET = request.GET.copy()
            del request.GET["approval_prompt"]
        return super().get(request, *args, **kwargs)

    def validate_authorization_request(self, request):
        scopes, credentials = super().validate_authorization_request(request)
        state, redirect_uri = credentials.get("state"), credentials["redirect_uri"]
        if credentials.get("code_challenge_method") != "S256":
            raise OAuthToolkitError(
                errors.InvalidRequestError(
                    description="PKCE with code_challenge_method S256 is required.", state=state
                ),
                redirect_uri,
            )
        expected = mcp_resource_url(request)
        for resource in request.GET.getlist("resource"):
            if not resource_is(resource, expected):
                raise OAuthToolkitError(
                    errors.CustomOAuth2Error(
                        "invalid_target",
                        description=f"This server issues tokens only for {expected}.",
                        state=state,
                    ),
                    redirect_uri,
                )
        return scopes, credentials

    def get_initial(self):
        initial = super().get_initial()
        initial["resource"] = initial.get("resource") or mcp_resource_url(self.request)  # RFC 8707: bind always
        initial["asked"] = asked_signature(
            client_id=initial.get("client_id") or "",
            code_challenge=initial.get("code_challenge") or "",
            scope=initial.get("scope") or "",
        )
        return initial

    def get_form_kwargs(self):
        kwargs = super().get_form_kwargs()
        requested = (  # posted: trusted only once form_valid finds it signed (asked_unaltered)
            self.request.POST.get("scope", "")
            if self.request.method == "POST"
            else " ".join(self.oauth2_data.get("scopes", []))
        )
        kwargs.update(user=self.request.user, offered=offered_accesses(requested))
        return kwargs

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        form = context.get("form")
        if form is not None and not context.get("error"):
            client_id = form["client_id"].value()
            application = context.get("application") or OAuthApplication.objects.filter(client_id=client_id).first()
            redirect_uri = form["redirect_uri"].value() or ""
            context.update(
                application=application,
                app_name=(application.name if application and application.name else "An app"),
                app_host=client_host(application) if application else "",
                redirect_host=urlsplit(redirect_uri).hostname or "",
                memberships=form.memberships,
                writable_projects={m.project.slug for m in form.memberships if can(m.role, "grant_write")},
                own_end_user=own_end_user_id(self.request.user),
                picking_roles=_roles_plural(roles_with("connect_any_end_user")),
                own_only_roles=_roles_plural(roles_without("connect_any_end_user")),
                read_only_roles=_roles_plural(roles_without("grant_write")),
            )
        return context

    def form_valid(self, form):
        if not OAuthApplication.objects.filter(client_id=form.cleaned_data.get("client_id") or "").exists():
            # The hidden client_id was altered after the GET checked it: no app to answer, so answer here.
            error: errors.OAuth2Error = errors.InvalidClientIdError(
                description="No app is registered with that client_id."
            )
            return self.render_to_response({"error": error}, status=400)
        if not asked_unaltered(self.request.POST):
            # The hidden scope (or the request it was asked in) was altered after the GET: the grant would not be
            # what the app asked for, so answer here, never redirect on it.
            error = errors.InvalidRequestError(description="The card was changed after it was shown; start again.")
            return self.render_to_response({"error": error}, status=400)
        expected = mcp_resource_url(self.request)
        resources = (form.cleaned_data.get("resource") or expected).split()
        if not all(resource_is(resource, expected) for resource in resources):
            # The hidden field was altered after the GET checked it: answer here, never redirect on it.
            error = errors.CustomOAuth2Error("invalid_target", description=f"Tokens are only for {expected}.")
            return self.render_to_response({"error": error}, status=400)
        self.consent = form.cleaned_data
        return super().form_valid(form)

    def create_authorization_response(self, request, scopes, credentials, allow):
        """Allowed: the card's choices become a Connection, and the code is issued for it, with the scopes of
        the chosen access (not those asked for). In one transaction, so a refused code leaves no connection."""
        if not allow or getattr(self, "consent", None) is None:  # no card answered (a skip path): no grant
            return super().create_authorization_response(request, scopes, credentials, False)
        with transaction.atomic():
            credentials["connection"] = connection_grant(
                user=request.user,
                application=OAuthApplication.objects.get(client_id=credentials["client_id"]),
                project=self.consent["project"],
                end_user_id=self.consent["end_user"],
                access=self.consent["access"],
            )
            return super().create_authorization_response(
                request, scope_for_access(self.consent["access"]), credentials, allow
            )

    def redirect(self, redirect_to, application):
        """Every answer to the app names this issuer (RFC 9207), errors too, against mix-up attacks."""
        issuer = oauth2_settings.oauth2_authorization_server_issuer(self.request)
        return super().redirect(with_iss(redirect_to, issuer), application)
