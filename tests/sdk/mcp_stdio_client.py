"""Drive the local stdio server with the official `mcp` SDK's stdio client (a client we did not write).

Run it in its own process (the SDK is an async client of its own, with its own event loop):

    python tests/sdk/mcp_stdio_client.py SPEC_JSON

SPEC_JSON holds {"command", "args", "cwd", "env", "calls": [[tool, arguments], ...]} and optionally
"client": "v2". The script starts the server, initializes (the v1 `ClientSession`) or lets the v2 `Client`
negotiate (its default mode probes `server/discover` first), lists the tools, makes each call, and prints ONE
JSON line: the revision spoken, the server's instructions, the tool names, and per call its isError flag and
its text.
"""

import asyncio
import json
import sys

from mcp import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def _calls(session_like, spec: dict) -> list[dict]:
    calls = []
    for name, arguments in spec["calls"]:
        result = await session_like.call_tool(name, arguments)
        text = result.content[0].text if result.content else ""
        calls.append({"name": name, "isError": result.is_error, "text": text})
    return calls


async def run_v2(server: StdioServerParameters, spec: dict) -> dict:
    async with Client(server, mode="auto", cache=None) as client:
        tools = await client.list_tools()
        return {
            "ok": True,
            "protocol_version": client.protocol_version,
            "discovered": client.session.discover_result is not None,
            "instructions": client.instructions,
            "tools": [t.name for t in tools.tools],
            "calls": await _calls(client, spec),
        }


async def run(spec: dict) -> dict:
    server = StdioServerParameters(command=spec["command"], args=spec["args"], cwd=spec["cwd"], env=spec["env"])
    if spec.get("client") == "v2":
        return await run_v2(server, spec)
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        tools = await session.list_tools()
        calls = await _calls(session, spec)
        return {
            "ok": True,
            "protocol_version": init.protocol_version,
            "instructions": init.instructions,
            "tools": [t.name for t in tools.tools],
            "annotations": {
                t.name: t.annotations.model_dump(by_alias=True, exclude_none=True) if t.annotations else None
                for t in tools.tools
            },
            "calls": calls,
        }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run(json.loads(open(sys.argv[1]).read())))))
