"""Headers every console page carries: never framed (clickjacking), never cached (it shows a person's data)."""

from functools import wraps

from django.utils.cache import add_never_cache_headers

# frame-ancestors 'none' says what X-Frame-Options: DENY says (the clickjacking middleware sends that), for
# browsers that read only CSP. No form-action: the consent form's answer redirects to the app's own site.
CONTENT_SECURITY_POLICY = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"


def console_page(view):
    """Decorate a console view (a function, or a class view's dispatch) with the console's headers."""

    @wraps(view)
    def wrapped(*args, **kwargs):
        response = view(*args, **kwargs)
        response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        add_never_cache_headers(response)
        return response

    return wrapped
