"""The protected resource every OAuth token is bound to (RFC 8707): this server's /v1/mcp."""

from urllib.parse import urlsplit

MCP_RESOURCE_PATH = "/v1/mcp"

# RFC 3986 §6.2.3: a URI naming its scheme's default port names the same resource as one that omits it.
DEFAULT_PORTS = {"http": 80, "https": 443}


def mcp_resource_url(request) -> str:
    """This server's /v1/mcp as an absolute URL: the resource every token is bound to."""
    return request.build_absolute_uri(MCP_RESOURCE_PATH)


def _resource_key(uri) -> tuple | None:
    """A resource URI compared the way RFC 3986 normalizes it (case of scheme and host, default port)."""
    if not isinstance(uri, str) or "#" in uri:
        return None
    parts = urlsplit(uri)
    try:
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname or parts.username is not None or parts.query:
        return None
    scheme = parts.scheme.lower()
    return scheme, parts.hostname.lower(), port or DEFAULT_PORTS.get(scheme), parts.path or "/"


def resource_is(uri, expected: str) -> bool:
    """Whether `uri` names the resource `expected` (this server's /v1/mcp)."""
    key = _resource_key(uri)
    return key is not None and key == _resource_key(expected)
