from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"

    def ready(self):
        # Registers the OpenAPI description of the request context's credentials with drf-spectacular.
        # The key cache's signals: every process that changes a key or a project renews its keys' tokens.
        from . import (
            keycache,  # noqa: F401 - imported for its signal receivers, once the models are loaded
            openapi,  # noqa: F401 - imported for its registration, once the models are loaded
        )
