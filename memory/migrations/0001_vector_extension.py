from django.db import migrations
from pgvector.django import VectorExtension


class Migration(migrations.Migration):
    """pgvector, created here so the same migrations run on the embedded server and on any PostgreSQL."""

    dependencies = []
    operations = [VectorExtension()]
