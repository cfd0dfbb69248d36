"""The console's forms: what a person may type, checked before any service runs."""

from django import forms
from django.contrib.auth import password_validation

from accounts.models import Access, Role
from accounts.services import PROJECT_NAME_MAX

KEY_NAME_MAX = 100
SEARCH_MAX = 128


class SignUpForm(forms.Form):
    email = forms.EmailField(max_length=254)
    password = forms.CharField(widget=forms.PasswordInput, strip=False)
    project_name = forms.CharField(max_length=PROJECT_NAME_MAX, required=False)

    def clean_email(self):
        return self.cleaned_data["email"].strip().lower()

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("password"):
            try:
                password_validation.validate_password(cleaned["password"])
            except forms.ValidationError as error:
                self.add_error("password", error)
        return cleaned


class ProjectForm(forms.Form):
    name = forms.CharField(max_length=PROJECT_NAME_MAX)


class DeleteProjectForm(forms.Form):
    confirm = forms.CharField(max_length=PROJECT_NAME_MAX)


class InviteForm(forms.Form):
    email = forms.EmailField(max_length=254)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.MEMBER)


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


class KeyForm(forms.Form):
    name = forms.CharField(max_length=KEY_NAME_MAX)
    access = forms.ChoiceField(choices=Access.choices, initial=Access.READ, widget=forms.RadioSelect)


class ForgetForm(forms.Form):
    """Forget one item (`item`), or the whole end user (`everything` with the end user's id typed)."""

    item = forms.CharField(max_length=200, required=False)
    everything = forms.BooleanField(required=False)
    confirm = forms.CharField(max_length=200, required=False)
