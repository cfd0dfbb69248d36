"""Who may do what in a project: the one table of capabilities and the roles that have them.

Every console page and the playground ask `can(role, capability)` (through console.access.project_for), and
so do the consent card and a live OAuth connection (accounts.consent, accounts.connections), so a role's reach
is decided here and nowhere else. A capability the role lacks answers 404 in the console, the same as a
project that does not exist, so nothing can be probed.
"""

from .models import Role

OWNER, ADMIN, MEMBER, VIEWER = Role.OWNER, Role.ADMIN, Role.MEMBER, Role.VIEWER
EVERYONE = frozenset(Role)

CAPABILITIES: dict[str, frozenset] = {
    "view_project": EVERYONE,  # overview, the project switcher, the MCP instructions
    "view_members": EVERYONE,  # Viewers see the list, nothing more
    "manage_members": frozenset({OWNER, ADMIN}),  # invite, change roles, remove
    "manage_owners": frozenset({OWNER}),  # grant the Owner role, change or remove an Owner
    "view_keys": frozenset({OWNER, ADMIN, MEMBER}),  # Viewers cannot see keys
    "manage_keys": frozenset({OWNER, ADMIN, MEMBER}),  # create and revoke
    "view_end_users": EVERYONE,  # the list and one end user's memory, read-only
    "forget_memory": frozenset({OWNER, ADMIN}),  # forget one item or a whole end user
    "export_memory": EVERYONE,  # download what the end user's page shows, as a file
    "import_memory": frozenset({OWNER, ADMIN}),  # put an export into an end user's memory
    "rename_project": frozenset({OWNER, ADMIN}),
    "manage_limits": frozenset({OWNER, ADMIN}),  # the project's rate limits (settings page)
    "set_secret_policy": frozenset({OWNER, ADMIN}),  # refuse items holding a secret, or store them redacted
    "delete_project": frozenset({OWNER}),
    "view_connections": frozenset({OWNER, ADMIN}),  # every OAuth connection of the project, with Disconnect
    "view_usage": EVERYONE,
    "use_playground": EVERYONE,  # read tools
    "run_write_tools": frozenset({OWNER, ADMIN, MEMBER}),
    # Signing an app in by OAuth (the consent card), and what the connection keeps reaching afterwards:
    "connect_any_end_user": frozenset({OWNER, ADMIN, MEMBER}),  # else only the person's own end user
    "grant_write": frozenset({OWNER, ADMIN, MEMBER}),  # a Viewer grants Read only
}


def can(role: str | None, capability: str) -> bool:
    """True when `role` has `capability`. An unknown capability is a programming error, not a silent no."""
    if capability not in CAPABILITIES:
        raise KeyError(f"Unknown capability {capability!r}")
    return role in CAPABILITIES[capability]


def roles_with(capability: str) -> list[Role]:
    """The roles that have `capability`, in the order Role lists them (for the words on a page)."""
    return [role for role in Role if can(role, capability)]


def roles_without(capability: str) -> list[Role]:
    """The roles that lack `capability`, in the order Role lists them."""
    return [role for role in Role if not can(role, capability)]


def capabilities_of(role: str | None) -> frozenset[str]:
    """Every capability `role` has (for templates: `{% if "manage_keys" in can %}`)."""
    return frozenset(name for name, roles in CAPABILITIES.items() if role in roles)
