"""How each MCP client connects: the exact config to paste, for the MCP page and a freshly created key.

Clients that can send headers use a key and X-Twin-Account (the same two headers the HTTP API takes);
claude.ai and ChatGPT cannot, so they add the URL as a connector and sign in by OAuth.
"""

import json

KEY_PLACEHOLDER = "tm_YOUR_KEY"
ACCOUNT_PLACEHOLDER = "END_USER_ID"
SERVER_NAME = "twin-memory"


def _json(value) -> str:
    return json.dumps(value, indent=2)


def _headers(key: str, account: str) -> dict:
    return {"Authorization": f"Bearer {key}", "X-Twin-Account": account}


def client_configs(mcp_url: str, *, key: str = KEY_PLACEHOLDER, account: str = ACCOUNT_PLACEHOLDER) -> list[dict]:
    """One entry per client: id, name, where the text goes, the text, and a note. `oauth` marks sign-in clients."""
    return [*_key_clients(mcp_url, key, account), *_sign_in_clients(mcp_url)]


def _key_clients(mcp_url: str, key: str, account: str) -> list[dict]:
    """The clients that send a key and X-Twin-Account with every request."""
    headers = _headers(key, account)
    return [
        {
            "id": "claude-code",
            "name": "Claude Code",
            "where": "Run in a terminal",
            "text": (
                f"claude mcp add --transport http {SERVER_NAME} {mcp_url} \\\n"
                f'  --header "Authorization: Bearer {key}" \\\n  --header "X-Twin-Account: {account}"'
            ),
            "note": "Add --scope project to share it with your repository through .mcp.json.",
        },
        {
            "id": "cursor",
            "name": "Cursor",
            "where": "~/.cursor/mcp.json (or .cursor/mcp.json in a project)",
            "text": _json({"mcpServers": {SERVER_NAME: {"url": mcp_url, "headers": headers}}}),
            "note": "",
        },
        {
            "id": "vscode",
            "name": "VS Code",
            "where": ".vscode/mcp.json",
            "text": _json({"servers": {SERVER_NAME: {"type": "http", "url": mcp_url, "headers": headers}}}),
            "note": "Then start the server from the MCP view, or run “MCP: List Servers”.",
        },
        {
            "id": "windsurf",
            "name": "Windsurf",
            "where": "~/.codeium/windsurf/mcp_config.json",
            "text": _json({"mcpServers": {SERVER_NAME: {"serverUrl": mcp_url, "headers": headers}}}),
            "note": "",
        },
        {
            "id": "codex",
            "name": "Codex",
            "where": "~/.codex/config.toml",
            "text": (
                f'[mcp_servers.{SERVER_NAME.replace("-", "_")}]\nurl = "{mcp_url}"\n'
                f'http_headers = {{ "Authorization" = "Bearer {key}", "X-Twin-Account" = "{account}" }}'
            ),
            "note": "",
        },
        {
            "id": "claude-desktop",
            "name": "Claude Desktop (through mcp-remote)",
            "where": "Settings › Developer › Edit Config (claude_desktop_config.json)",
            "text": _json({"mcpServers": {SERVER_NAME: _mcp_remote(mcp_url, key, account)}}),
            "note": "Needs Node.js. The header values go through env because some clients split arguments at spaces.",
        },
    ]


def _mcp_remote(mcp_url: str, key: str, account: str) -> dict:
    """A stdio client's server entry that runs mcp-remote, which speaks HTTP to /v1/mcp with the two headers."""
    return {
        "command": "npx",
        "args": [
            "-y",
            "mcp-remote",
            mcp_url,
            "--header",
            "Authorization:${TWIN_AUTH}",
            "--header",
            "X-Twin-Account:${TWIN_ACCOUNT}",
        ],
        "env": {"TWIN_AUTH": f"Bearer {key}", "TWIN_ACCOUNT": account},
    }


def _sign_in_clients(mcp_url: str) -> list[dict]:
    """The clients that cannot send headers: they add the URL as a connector and sign in by OAuth."""
    return [
        {
            "id": "claude-ai",
            "name": "claude.ai",
            "oauth": True,
            "where": "Settings › Connectors › Add custom connector",
            "text": mcp_url,
            "note": "Paste the URL, then Connect: you sign in to twin memory and choose project, end user and access.",
        },
        {
            "id": "chatgpt",
            "name": "ChatGPT",
            "oauth": True,
            "where": "Settings › Apps & Connectors › Advanced settings › Developer mode, then Create",
            "text": mcp_url,
            "note": (
                "Paste the URL with OAuth as the authentication, then sign in to twin memory and choose on the card."
            ),
        },
    ]


def curl_line(base_url: str, *, key: str, account: str = ACCOUNT_PLACEHOLDER) -> str:
    """A ready request: search one end user's memory over the HTTP API."""
    return (
        f'curl -s {base_url}/v1/memory/search \\\n  -H "Authorization: Bearer {key}" \\\n'
        f'  -H "X-Twin-Account: {account}" \\\n  -H "Content-Type: application/json" \\\n'
        f'  -d \'{{"query": "What do you remember about me?"}}\''
    )


def python_lines(base_url: str, *, key: str, account: str = ACCOUNT_PLACEHOLDER) -> str:
    """The same search with the official Python client (clients/python): install, connect, ask."""
    return (
        "# pip install ./clients/python, from a clone of twin memory\n"
        "from twin_memory import TwinMemory\n"
        f'client = TwinMemory(api_key="{key}", account="{account}", base_url="{base_url}")\n'
        'print(client.search(query="What do you remember about me?"))'
    )


def typescript_lines(base_url: str, *, key: str, account: str = ACCOUNT_PLACEHOLDER) -> str:
    """The same search with the official TypeScript client (clients/typescript)."""
    return (
        "// npm install ./clients/typescript, from a clone of twin memory\n"
        'import { TwinMemory } from "twin-memory";\n'
        f'const client = new TwinMemory({{ apiKey: "{key}", account: "{account}", baseUrl: "{base_url}" }});\n'
        'console.log(await client.search({ query: "What do you remember about me?" }));'
    )
