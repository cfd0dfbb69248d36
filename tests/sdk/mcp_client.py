"""Drive /v1/mcp with the official `mcp` Python SDK, a client this project did not write.

Run it in its own process (the SDK is an async client of its own, with its own event loop):

    python tests/sdk/mcp_client.py URL KEY ACCOUNT v2|legacy|v1 [--phrase P] [--read-only]

v2 uses the SDK's `Client` in its default mode "auto": it probes `server/discover` and speaks 2026-07-28 when
the server answers it, else falls back to `initialize`. legacy is the same `Client` with mode "legacy" (the
initialize handshake, as before 2026); v1 the lower-level `ClientSession` over `streamable_http_client`. Each
lists the tools, then, unless --read-only, calls memory_add (wait: true), memory_grep for the phrase and every
other tool listed, lists the resources page by page and reads each, completes a template's argument, lists
the prompts and gets one. It prints ONE JSON line with what it saw, including every HTTP exchange (JSON-RPC method,
MCP-Protocol-Version, Mcp-Method and Mcp-Name sent, status, error code), so the caller can assert on the
negotiation too.
"""

import argparse
import asyncio
import json
import sys
import traceback

import httpx2
from mcp import Client, ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def _exchange_recorder(exchanges: list[dict]):
    """httpx2 event hooks recording each POST: its JSON-RPC method and version header, then the answer."""

    async def on_request(request: httpx2.Request) -> None:
        try:
            body = json.loads(request.content or b"null")
        except ValueError:
            body = None
        exchanges.append(
            {
                "http": request.method,
                "method": body.get("method") if isinstance(body, dict) else None,
                "is_request": isinstance(body, dict) and "id" in body,
                "protocol_version": request.headers.get("mcp-protocol-version"),
                "mcp_method": request.headers.get("mcp-method"),
                "mcp_name": request.headers.get("mcp-name"),
                "origin": request.headers.get("origin"),
            }
        )

    async def on_response(response: httpx2.Response) -> None:
        exchange = exchanges[-1] if exchanges else {}
        exchange["status"] = response.status_code
        exchange["content_type"] = response.headers.get("content-type", "")
        exchange["session_id"] = response.headers.get("mcp-session-id")
        if exchange["content_type"].startswith("application/json"):
            # The transport reads JSON bodies with aread(), which returns this cached content again.
            body = json.loads(await response.aread() or b"null")
            if isinstance(body, dict) and "error" in body:
                exchange["error_code"] = body["error"].get("code")
                exchange["error_message"] = body["error"].get("message")

    return {"request": [on_request], "response": [on_response]}


def _text(result) -> str | None:
    texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
    return "\n".join(texts) if texts else None


def _wire(model) -> dict | None:
    """A pydantic model from the SDK as it was on the wire (camelCase names)."""
    return None if model is None else model.model_dump(mode="json", by_alias=True, exclude_none=True)


def _tool_call(result) -> dict:
    return {"text": _text(result), "is_error": bool(result.is_error)}


async def _exercise(session_like, seen: dict, phrase: str, read_only: bool) -> None:
    """list tools, add, grep: the same calls on a v2 Client and a v1 ClientSession."""
    tools = await session_like.list_tools()
    seen["tools"] = [tool.name for tool in tools.tools]
    seen["read_only_hints"] = {
        tool.name: (tool.annotations.read_only_hint if tool.annotations else None) for tool in tools.tools
    }
    if read_only:
        return
    added = await session_like.call_tool(
        "memory_add",
        {
            "items": [
                {
                    "id": "sdk-interop-1",
                    "text": f"My favourite tram is the {phrase} line, I take it every Sunday.",
                    "kind": "note",
                },
                {"id": "sdk-interop-2", "text": "I moved to Lisbon in March.", "kind": "note"},
            ],
            "wait": True,
        },
    )
    seen["add"] = _tool_call(added)
    grep = await session_like.call_tool("memory_grep", {"pattern": phrase})
    seen["grep"] = _tool_call(grep)
    hit = json.loads(seen["grep"]["text"])["hits"][0]
    others = {  # every other tool, on what the add saved; a tool error is an answer, a protocol error raises
        "memory_search": {"query": f"Which is my favourite tram, the {phrase}?"},
        "memory_read": {"path": hit["path"]},
        "memory_ls": {},
        "memory_around": {"passage_id": hit["passage_id"]},
        "memory_history": {"subject": "user"},
        "memory_latest": {"k": 2},
        "memory_overview": {},
    }
    seen["every_tool"] = {
        name: _tool_call(await session_like.call_tool(name, arguments))
        for name, arguments in others.items()
        if name in seen["tools"]
    }


async def _primitives(session_like, seen: dict) -> None:
    """Resources (every page, each read), a template's argument completed, the prompts listed and one got."""
    from_v2 = isinstance(session_like, Client)
    uris, cursor = [], None
    while True:
        if from_v2:
            page = await session_like.list_resources(cursor=cursor)
        else:
            page = await session_like.list_resources(params=types.PaginatedRequestParams(cursor=cursor))
        uris += [str(resource.uri) for resource in page.resources]
        cursor = page.next_cursor
        if not cursor:
            break
    seen["resources"] = uris
    seen["resource_texts"] = {
        uri: [c.text for c in (await session_like.read_resource(uri)).contents if hasattr(c, "text")] for uri in uris
    }
    templates = await session_like.list_resource_templates()
    seen["templates"] = [t.uri_template for t in templates.resource_templates]
    reference = types.ResourceTemplateReference(uri=seen["templates"][0])
    completed = await session_like.complete(reference, {"name": "path", "value": "memory/"})
    seen["completion"] = completed.completion.values
    prompts = await session_like.list_prompts()
    seen["prompts"] = [p.name for p in prompts.prompts]
    got = await session_like.get_prompt("recall", {"topic": "my favourite tram"})
    seen["prompt_text"] = got.messages[0].content.text


async def run(url: str, key: str, account: str, mode: str, phrase: str, read_only: bool) -> dict:
    exchanges: list[dict] = []
    seen: dict = {"mode": mode, "exchanges": exchanges}
    http = create_mcp_http_client(
        headers={"Authorization": f"Bearer {key}", "X-Twin-Account": account},
        timeout=httpx2.Timeout(20.0),
    )
    http.event_hooks = _exchange_recorder(exchanges)
    async with http:
        transport = streamable_http_client(url, http_client=http)
        if mode in ("v2", "legacy"):
            client_mode = "auto" if mode == "v2" else "legacy"
            async with Client(transport, mode=client_mode, read_timeout_seconds=30, cache=None) as client:
                seen["protocol_version"] = client.protocol_version
                seen["server_info"] = _wire(client.server_info)
                seen["instructions"] = client.instructions
                seen["capabilities"] = _wire(client.server_capabilities)
                seen["discovered"] = client.session.discover_result is not None
                seen["discover_result"] = _wire(client.session.discover_result)
                await _exercise(client, seen, phrase, read_only)
                if not read_only:
                    await _primitives(client, seen)
        else:
            async with transport as (read_stream, write_stream):
                async with ClientSession(read_stream, write_stream, read_timeout_seconds=30) as session:
                    result = await session.initialize()
                    seen["protocol_version"] = result.protocol_version
                    seen["server_info"] = _wire(result.server_info)
                    seen["instructions"] = result.instructions
                    seen["capabilities"] = _wire(result.capabilities)
                    await _exercise(session, seen, phrase, read_only)
                    if not read_only:
                        await _primitives(session, seen)
    return seen


def _leaves(exc: BaseException) -> list[str]:
    """The innermost exceptions of a (nested) exception group, as "Type: message"."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [f"{type(exc).__name__}: {exc}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("key")
    parser.add_argument("account")
    parser.add_argument("mode", choices=("v2", "legacy", "v1"))
    parser.add_argument("--phrase", default="Sapphire Heron")
    parser.add_argument("--read-only", action="store_true", help="list tools only; no add or grep")
    args = parser.parse_args()

    try:
        seen = asyncio.run(run(args.url, args.key, args.account, args.mode, args.phrase, args.read_only))
    except BaseException as exc:  # noqa: BLE001 - the caller wants one JSON line, whatever happened
        print(json.dumps({"ok": False, "error": "; ".join(_leaves(exc)), "traceback": traceback.format_exc()}))
        return 1
    print(json.dumps({"ok": True, **seen}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
