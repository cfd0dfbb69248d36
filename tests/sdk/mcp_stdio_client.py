"""Drive the local stdio server with the official `mcp` SDK's stdio client (a client we did not write).

Run from another working directory with `python -P` (the project's `mcp/` app shadows the SDK's name):

    python -P tests/sdk/mcp_stdio_client.py SPEC_JSON

SPEC_JSON holds {"command", "args", "cwd", "env", "calls": [[tool, arguments], ...]}. The script starts the
server, initializes, lists the tools, makes each call, and prints ONE JSON line: the server's instructions,
the tool names, and per call its isError flag and its text.
"""

import asyncio
import json
import os
import sys

import mcp

if os.path.basename(os.path.dirname(os.path.dirname(os.path.abspath(mcp.__file__)))) not in (
        "site-packages", "dist-packages"):
    print(json.dumps({"ok": False, "error": f"`import mcp` resolved to {mcp.__file__}"}))
    sys.exit(2)

from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402


async def run(spec: dict) -> dict:
    server = StdioServerParameters(command=spec["command"], args=spec["args"], cwd=spec["cwd"], env=spec["env"])
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        tools = await session.list_tools()
        calls = []
        for name, arguments in spec["calls"]:
            result = await session.call_tool(name, arguments)
            calls.append({"name": name, "isError": result.is_error,
                          "text": result.content[0].text if result.content else ""})
        return {"ok": True, "protocol_version": init.protocol_version, "instructions": init.instructions,
                "tools": [t.name for t in tools.tools],
                "annotations": {t.name: t.annotations.model_dump(by_alias=True, exclude_none=True) for t in tools.tools},
                "calls": calls}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run(json.loads(open(sys.argv[1]).read())))))
