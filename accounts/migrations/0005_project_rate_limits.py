from django.db import migrations, models


class Migration(migrations.Migration):
    """Each project's own rate limits (accounts/ratelimit.py); empty is the service's default."""

    dependencies = [
        ("accounts", "0004_grant_used_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="rate_limit_per_credential",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="project",
            name="rate_limit_per_end_user",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
    ]
