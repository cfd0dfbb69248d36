# Connections: what a person granted an app on the consent card, and the link from codes and tokens to it.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="Connection",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("access", models.CharField(choices=[("read", "Read"), ("write", "Read and write")], max_length=8)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("last_used_at", models.DateTimeField(blank=True, null=True)),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                (
                    "application",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="connections",
                        to=settings.OAUTH2_PROVIDER_APPLICATION_MODEL,
                    ),
                ),
                (
                    "end_user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="connections", to="accounts.enduser"
                    ),
                ),
                (
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="connections", to="accounts.project"
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="connections",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
        migrations.AddField(
            model_name="oauthaccesstoken",
            name="connection",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="access_tokens",
                to="accounts.connection",
            ),
        ),
        migrations.AddField(
            model_name="oauthgrant",
            name="connection",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="grants",
                to="accounts.connection",
            ),
        ),
        migrations.AddField(
            model_name="oauthrefreshtoken",
            name="connection",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="refresh_tokens",
                to="accounts.connection",
            ),
        ),
        migrations.AddIndex(
            model_name="connection",
            index=models.Index(fields=["user", "revoked_at"], name="connection_user_live"),
        ),
        migrations.AddIndex(
            model_name="connection",
            index=models.Index(fields=["project", "revoked_at"], name="connection_project_live"),
        ),
    ]
