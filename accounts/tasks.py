"""Background work for accounts: clearing out what OAuth no longer needs."""

from celery import shared_task
from oauth2_provider.models import clear_expired


@shared_task
def clear_expired_tokens() -> None:
    """Delete expired codes (used ones are kept until then, so a reused code is recognised) and expired
    access tokens, and refresh tokens past their 30 days; revoked refresh tokens are kept that long too
    (REFRESH_TOKEN_REUSE_PROTECTION), so a rotated one presented again still ends its connection. The
    toolkit's own clear_expired, as its `cleartokens` command runs it, run daily by the beat."""
    clear_expired()
