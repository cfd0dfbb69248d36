"""Bounding password guessing at the console's sign-in: failures are counted per email and per client
address over 15 minutes; past either allowance, every attempt waits, the right password included.

The email is counted whether or not it has an account, so the answer never tells which emails do.
"""

from django.conf import settings

from . import throttle

WINDOW = 15 * 60


def _who(request) -> tuple[str, str]:
    return request.POST.get("username", "").strip().lower(), throttle.client_address(request)


def sign_in_wait(request) -> int | None:
    """Seconds before this sign-in may be tried, when its account or its address is out of attempts."""
    email, address = _who(request)
    return throttle.used_up("signin-account", email, settings.LOGIN_FAILURES_PER_ACCOUNT, WINDOW) or throttle.used_up(
        "signin-address", address, settings.LOGIN_FAILURES_PER_ADDRESS, WINDOW
    )


def sign_in_failed(request) -> None:
    email, address = _who(request)
    throttle.count("signin-account", email, WINDOW)
    throttle.count("signin-address", address, WINDOW)
