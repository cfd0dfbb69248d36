"""Imports as jobs (memory/portability/jobs.py): a row per import, under row-level security as the usage
tables are, by its project alone (its end user may not exist yet: the import makes them when it stores), and
at most one running import a project."""

from importlib import import_module

import django.contrib.postgres.fields
import django.db.models.deletion
from django.db import migrations, models

ROW_LEVEL_SECURITY = import_module("memory.migrations.0008_row_level_security")


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0006_project_secret_policy"),
        ("memory", "0023_vectors_in_the_row"),
    ]

    operations = [
        migrations.CreateModel(
            name="ImportJob",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("public_id", models.CharField(max_length=32, unique=True)),
                ("account", models.CharField(max_length=128)),
                ("made_end_user", models.BooleanField(default=False)),
                ("surface", models.CharField(max_length=16)),
                ("state", models.CharField(default="queued", max_length=8)),
                ("file", models.CharField(max_length=1024)),
                ("items", models.IntegerField(null=True)),
                ("checked", models.IntegerField(default=0)),
                ("stored", models.IntegerField(default=0)),
                (
                    "added",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(), default=list, size=None
                    ),
                ),
                ("answer", models.JSONField(null=True)),
                ("status", models.IntegerField(null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("started_at", models.DateTimeField(null=True)),
                ("finished_at", models.DateTimeField(null=True)),
                (
                    "api_key",
                    models.ForeignKey(
                        null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to="accounts.apikey"
                    ),
                ),
                (
                    "connection",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="accounts.connection",
                    ),
                ),
                (
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="accounts.project"
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("state__in", ("queued", "checking", "storing"))),
                        fields=("project",),
                        name="one_running_import",
                    )
                ],
            },
        ),
        ROW_LEVEL_SECURITY.protect("memory_importjob", f"project_id = {ROW_LEVEL_SECURITY.PROJECT}"),
    ]
