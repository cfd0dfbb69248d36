"""The console's forms: what a person may type, checked before any service runs."""

from django import forms
from django.contrib.auth import password_validation

from accounts.models import END_USER_ID_MAX, Access, ApiKey, Role, SecretPolicy
from accounts.ratelimit import RATE_LIMIT_MAX
from accounts.services import PROJECT_NAME_MAX
from memory.limits import ITEM_ID_MAX

KEY_NAME_MAX = ApiKey._meta.get_field("name").max_length
SEARCH_MAX = END_USER_ID_MAX  # a search matches part of an end user's id
EMAIL_MAX = 254  # the longest usable address: SMTP's 256-character path less its angle brackets (RFC 5321)


class SignUpForm(forms.Form):
    email = forms.EmailField(max_length=EMAIL_MAX)
    password = forms.CharField(widget=forms.PasswordInput, strip=False)
    project_name = forms.CharField(max_length=PROJECT_NAME_MAX, required=False)

    def clean_email(self):
        return self.cleaned_data["email"].strip().lower()

    def clean(self):
        super().clean()
        cleaned = self.cleaned_data
        if cleaned.get("password"):
            try:
                password_validation.validate_password(cleaned["password"])
            except forms.ValidationError as error:
                self.add_error("password", error)
        return cleaned


class ProjectForm(forms.Form):
    name = forms.CharField(max_length=PROJECT_NAME_MAX)


class RateLimitsForm(forms.Form):
    """The project's rate limits in requests a minute; empty keeps the service's default."""

    per_credential = forms.IntegerField(
        min_value=1, max_value=RATE_LIMIT_MAX, required=False, label="Requests a minute per key or app"
    )
    per_end_user = forms.IntegerField(
        min_value=1, max_value=RATE_LIMIT_MAX, required=False, label="Requests a minute per key or app and end user"
    )


class SecretPolicyForm(forms.Form):
    """What memory does with an item holding a secret (memory/secrets/gate.py)."""

    policy = forms.ChoiceField(choices=SecretPolicy.choices, widget=forms.RadioSelect)


class DeleteProjectForm(forms.Form):
    confirm = forms.CharField(max_length=PROJECT_NAME_MAX)


class InviteForm(forms.Form):
    email = forms.EmailField(max_length=EMAIL_MAX)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.MEMBER)


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


class KeyForm(forms.Form):
    name = forms.CharField(max_length=KEY_NAME_MAX)
    access = forms.ChoiceField(choices=Access.choices, initial=Access.READ, widget=forms.RadioSelect)


class ForgetForm(forms.Form):
    """Forget one item (`item`), or the whole end user (`everything` with the end user's id typed)."""

    item = forms.CharField(max_length=ITEM_ID_MAX, required=False)
    everything = forms.BooleanField(required=False)
    confirm = forms.CharField(max_length=END_USER_ID_MAX, required=False)
