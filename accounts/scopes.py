"""The OAuth scopes, defined once: what a token may do with the memory it reaches.

Plain constants with no Django import, so twin/settings.py builds django-oauth-toolkit's SCOPES and
DEFAULT_SCOPES from them, and the consent card, registration and /v1/mcp read the same names.
"""

SCOPE_READ = "memory:read"
SCOPE_WRITE = "memory:write"

# Each scope and the words the toolkit shows for it.
SCOPES = {SCOPE_READ: "Read memory", SCOPE_WRITE: "Save to memory"}

# A client that names no scope is offered both; the person chooses the access on the card.
DEFAULT_SCOPES = [SCOPE_READ, SCOPE_WRITE]
