"""Sign up (/signup): the form, "check your email", and the link that creates the account.

The form answers the same whether or not the email has an account (accounts.signup mails which); the link
shows a button, and the account is created by its POST, so a mail scanner that follows links creates nothing.
"""

from django.contrib import messages
from django.contrib.auth import login
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from accounts.services import AccountsError
from accounts.signup import signup_confirm, signup_pending, signup_request

from .forms import SignUpForm
from .security import console_page
from .views import _safe_next


@console_page
def signup(request):
    """A new account, with its own first project (Owner). `next` (an invitation link) is where it goes after."""
    if request.user.is_authenticated:
        return redirect(_safe_next(request, reverse("console:home")))
    form = SignUpForm(request.POST or None, initial={"email": request.GET.get("email", "")})
    if request.method == "POST" and form.is_valid():
        signup_request(
            email=form.cleaned_data["email"],
            password=form.cleaned_data["password"],
            project_name=form.cleaned_data["project_name"],
            next_url=_safe_next(request, ""),
            link_for=lambda token: request.build_absolute_uri(reverse("console:signup-confirm", args=[token])),
            login_url=request.build_absolute_uri(reverse("console:login")),
            reset_url=request.build_absolute_uri(reverse("console:password-reset")),
        )
        return redirect("console:signup-sent")
    return render(request, "console/signup.html", {"form": form, "next": _safe_next(request, "")})


@console_page
def signup_sent(request):
    """The same answer for every sign-up: the mail says what comes next."""
    return render(request, "console/signup_sent.html")


@console_page
@require_http_methods(["GET", "POST"])
def signup_finish(request, token: str):
    """GET: the button that creates the account. POST: create it, sign in, go to `next` or the new project."""
    pending = signup_pending(token=token)
    if pending is None:
        raise Http404("This link no longer works: it was used, or it is older than a day. Sign up again.")
    if request.method != "POST":
        return render(request, "console/signup_finish.html", {"email": pending["email"]})
    try:
        user, project, next_url = signup_confirm(token=token)
    except AccountsError as refused:
        messages.error(request, str(refused))
        return redirect("console:login")
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    messages.success(request, f"Welcome! Your project {project.name} is ready: create a key to start.")
    return redirect(next_url or reverse("console:project", kwargs={"slug": project.slug}))
