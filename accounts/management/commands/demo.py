import json
import secrets

from django.conf import settings
from django.core.management.base import BaseCommand

from accounts.models import ApiKey, User
from accounts.services import api_key_create, hash_key, project_get_or_create

DEMO_PROJECT = "Demo"
DEMO_OWNER = "demo@example.com"
DEMO_ACCOUNT = "demo_user"
PASSWORD_BYTES = 12  # of randomness in the demo owner's password: 16 URL-safe characters


class Command(BaseCommand):
    help = "Create (once) a demo project with a read key and a read-and-write key, and print how to use them."

    def add_arguments(self, parser):
        parser.add_argument("--port", default="8000")

    def _owner_password(self, keys: dict) -> str:
        """The demo owner's console password: made once, kept beside the demo keys (development only)."""
        owner = User.objects.get(email=DEMO_OWNER)
        if not keys.get("password") or not owner.check_password(keys["password"]):
            keys["password"] = secrets.token_urlsafe(PASSWORD_BYTES)
            owner.set_password(keys["password"])
            owner.save(update_fields=["password"])
        return keys["password"]

    def _keys(self, project) -> dict:
        # Keys are stored hashed, so the demo's own clear copies live in an untracked file for development.
        path = settings.VAR_DIR / "demo-keys.json"
        keys = json.loads(path.read_text()) if path.exists() else {}
        for access in ("read", "write"):
            raw = keys.get(access, "")
            valid = ApiKey.objects.filter(
                project=project, key_hash=hash_key(raw), access=access, revoked_at=None
            ).exists()
            if not valid:
                _, keys[access] = api_key_create(project=project, access=access, name=f"demo {access}")
        self._owner_password(keys)
        path.write_text(json.dumps(keys))
        path.chmod(0o600)
        return keys

    def handle(self, *args, port, **options):
        project, _ = project_get_or_create(name=DEMO_PROJECT, owner_email=DEMO_OWNER)
        keys = self._keys(project)
        base = f"http://127.0.0.1:{port}"
        mcp_config = {
            "mcpServers": {
                "twin-memory": {
                    "type": "http",
                    "url": f"{base}/v1/mcp",
                    "headers": {"Authorization": f"Bearer {keys['write']}", "X-Twin-Account": DEMO_ACCOUNT},
                }
            }
        }
        self.stdout.write(
            f"""
twin memory demo project: {project.slug}
  read key:            {keys["read"]}
  read and write key:  {keys["write"]}

Try it:
  curl -s {base}/v1/me -H "Authorization: Bearer {keys["write"]}" -H "X-Twin-Account: {DEMO_ACCOUNT}"

MCP client config (Claude Code .mcp.json, Cursor mcp.json):
{json.dumps(mcp_config, indent=2)}

Console: {base}/login as {DEMO_OWNER}, password {keys["password"]}
API docs: {base}/v1/docs
"""
        )
