"""The load benchmark's clients: one MCP client per end user, over HTTP/1.1 keep-alive on asyncio streams.

Deliberately small (no HTTP library): 200 clients share the 2 cores with the server they measure, so each
call should cost the client as little as possible. Speaks the wire as any MCP client over Streamable HTTP
does: one JSON-RPC message per POST to /v1/mcp, a plain JSON answer back.
"""

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

CALL_TIMEOUT_SECONDS = 60  # past `wait`'s 20 s and a busy server's queue: longer is a hang, counted as one
PROTOCOL_VERSION = "2025-06-18"
WORD = re.compile(r"\bsw[0-9a-f]{10}\b")  # every client's secret word has this shape
ECHOES = ("query", "pattern")  # an answer's echo of the question: another's word there is no leak


class CallFailed(Exception):
    """A call that got no answer to measure: `kind` names why (timeout, connection)."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


class Http:
    """One keep-alive HTTP/1.1 connection to the service, reopened when the server closes it."""

    def __init__(self, base_url: str):
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname, parts.port or 80
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: dict, headers: dict) -> tuple[int, dict, bytes]:
        """(status, lower-cased headers, body); one reconnect when a kept-alive connection was closed."""
        payload = json.dumps(body).encode()
        for attempt in (1, 2):
            try:
                return await asyncio.wait_for(self._exchange(path, payload, headers), CALL_TIMEOUT_SECONDS)
            except TimeoutError:
                await self.close()
                raise CallFailed("timeout") from None
            except (ConnectionError, asyncio.IncompleteReadError, OSError):
                await self.close()
                if attempt == 2:
                    raise CallFailed("connection") from None
        raise AssertionError("unreachable")

    async def _exchange(self, path: str, payload: bytes, headers: dict) -> tuple[int, dict, bytes]:
        if self.reader is None or self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        lines = [
            f"POST {path} HTTP/1.1",
            f"Host: {self.host}:{self.port}",
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
            f"Content-Length: {len(payload)}",
            *(f"{name}: {value}" for name, value in headers.items()),
        ]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)
        await self.writer.drain()
        status_line = await self.reader.readuntil(b"\r\n")
        if not status_line:
            raise ConnectionError("closed")
        status = int(status_line.split()[1])
        answer_headers = {}
        while (line := await self.reader.readuntil(b"\r\n")) != b"\r\n":
            name, _, value = line.decode("latin-1").partition(":")
            answer_headers[name.strip().lower()] = value.strip()
        body = await self.reader.readexactly(int(answer_headers.get("content-length", 0)))
        if answer_headers.get("connection", "").lower() == "close":
            await self.close()
        return status, answer_headers, body

    async def close(self):
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None


@dataclass
class Tally:
    """What a run of calls came to: latencies per tool, when each good answer came (perf_counter), errors
    by kind, leaks, and the last leak seen."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    answered_at: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    leaks: int = 0
    leak_example: str = ""

    def error(self, kind: str):
        self.errors[kind] = self.errors.get(kind, 0) + 1


def leaked_words(answer: dict, own: str) -> set[str]:
    """Other clients' secret words in an answer, its echo of the question left out."""
    kept = {name: value for name, value in answer.items() if name not in ECHOES}
    return set(WORD.findall(json.dumps(kept))) - {own}


class McpClient:
    """One assistant: its own key and end user, its secret word, its own connection."""

    def __init__(self, base_url: str, key: str, account: str, word: str, tally: Tally):
        self.http, self.word, self.tally = Http(base_url), word, tally
        self.headers = {
            "Authorization": f"Bearer {key}",
            "X-Twin-Account": account,
            "MCP-Protocol-Version": PROTOCOL_VERSION,
        }
        self.ids = 0

    async def rpc(self, method: str, params: dict) -> tuple[int, dict]:
        self.ids += 1
        status, _, body = await self.http.post(
            "/v1/mcp", {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}, self.headers
        )
        try:
            return status, json.loads(body)
        except ValueError:  # not JSON-RPC at all (a proxy's or the server's own error page)
            return status, {"error": {"code": None}}

    async def initialize(self):
        await self.rpc(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "twin-load-bench", "version": "1"},
            },
        )

    async def call(self, label: str, tool: str, arguments: dict) -> dict | None:
        """tools/call, timed under `label`; the answer's JSON, or None when it failed (counted by kind)."""
        started = time.perf_counter()
        try:
            status, message = await self.rpc("tools/call", {"name": tool, "arguments": arguments})
        except CallFailed as failed:
            self.tally.error(f"{label}: {failed.kind}")
            return None
        answered = time.perf_counter()
        self.tally.latencies.setdefault(label, []).append(answered - started)
        if "error" in message:
            self.tally.error(f"{label}: HTTP {status} JSON-RPC {message['error'].get('code')}")
            return None
        result = message["result"]
        answer = json.loads(result["content"][0]["text"])
        if result.get("isError"):
            self.tally.error(f"{label}: tool error {answer.get('error')}")
            return None
        leaks = leaked_words(answer, self.word)
        if leaks:
            self.tally.leaks += 1
            self.tally.leak_example = f"{self.word} saw {sorted(leaks)[:3]} in {tool}"
        self.tally.answered_at.append(answered)  # the throughput counts answers, not errors
        return answer

    async def close(self):
        await self.http.close()
