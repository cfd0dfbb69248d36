"""The console's form POST, written once: the form bound to the POST, then either the action's message and a
redirect, or the page again with the form's errors and 400. On a project's page the project comes first,
through access.project_for (the same 404 for missing, not-yours and not-allowed)."""

from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect

from accounts.models import Project
from accounts.services import AccountsError

from .access import project_for


@dataclass(frozen=True)
class Done:
    """What a valid form's action did: the message the next page shows, and where the browser goes."""

    message: str
    to: str  # a URL


# A refusal by the rules (AccountsError) is shown on the form's field that caused it: a field's name, or a
# function that picks it from the refusal.
RefusedField = str | Callable[[AccountsError], str] | None


def form_post(
    request,
    form_class: type[forms.Form],
    *,
    act: Callable[[dict], Done | HttpResponse],
    page: Callable[[forms.Form], HttpResponse],
    refused_field: RefusedField = None,
) -> HttpResponse:
    """Bind `form_class` to the POST; when valid, `act(cleaned_data)`: a Done becomes its message and a
    redirect, a response (a page shown once) is answered as it is. An invalid form, or one whose action the
    rules refuse, is `page(form)` again with its errors, answered 400."""
    form = form_class(request.POST)
    if form.is_valid():
        try:
            done = act(form.cleaned_data)
        except AccountsError as refused:
            field = refused_field(refused) if callable(refused_field) else refused_field
            form.add_error(field, str(refused))
        else:
            if isinstance(done, HttpResponse):
                return done
            messages.success(request, done.message)
            return redirect(done.to)
    response = page(form)
    response.status_code = HTTPStatus.BAD_REQUEST
    return response


def project_form_post(
    request,
    slug: str,
    capability: str,
    form_class: type[forms.Form],
    *,
    act: Callable[[Project, dict], Done | HttpResponse],
    page: Callable[[Project, forms.Form], HttpResponse],
    refused_field: RefusedField = None,
) -> HttpResponse:
    """form_post on a project's page: the project `slug` for `capability` first (else 404, as project_for),
    then handed to the action and to the page."""
    project = project_for(request, slug, capability)
    return form_post(
        request,
        form_class,
        act=lambda data: act(project, data),
        page=lambda form: page(project, form),
        refused_field=refused_field,
    )
