"""A local fake model server speaking the OpenAI chat-completions wire format, for tests (never a real API).

    def test_x(fake_llm):  # a fixture of every test (tests/conftest.py's pytest_plugins)
        fake_llm.reply("Ana lives in Porto [th_.../p_0001].")
        fake_llm.fail(500)
        ...
        fake_llm.requests[0]["headers"]["Authorization"], fake_llm.requests[0]["body"]["messages"]

The fixture points settings.LLM_BASE_URL, LLM_API_KEY and LLM_MODEL at the server. Queued answers are used in
order; when the queue is empty, `handler(body)` answers (by default: no facts to an extraction request, "Memory
does not say." to anything else). A handler may return a string (the content) or an int (an error status).
"""

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

KEY = "sk-fake-test-key-0123456789"
MODEL = "fake/model-1"


def default_handler(body: dict):
    schema = (body.get("response_format") or {}).get("json_schema") or {}
    return json.dumps({"facts": []}) if schema.get("name") == "facts" else "Memory does not say."


class FakeLLM:
    def __init__(self):
        self.requests: list[dict] = []  # {"method", "path", "headers", "body"} of every request, in order
        self.queue: deque = deque()
        self.handler = default_handler
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_raw": raw.decode(errors="replace")}
                fake.requests.append({"method": "POST", "path": self.path, "headers": dict(self.headers), "body": body})
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": "not found"}})
                action = fake._next(body)
                if action[0] == "delay":
                    time.sleep(action[1])
                    action = ("reply", action[2])
                if action[0] == "fail":
                    return self._send(action[1], {"error": {"message": f"fake failure {action[1]}"}})
                if action[0] == "raw":
                    return self._send(200, action[1])
                self._send(200, fake.completion(action[1], body.get("model") or MODEL))

            def _send(self, status, payload):
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test); nothing to answer

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    # ---- programming the answers ----
    def reply(self, content: str):
        """Queue one successful answer with this assistant content."""
        self.queue.append(("reply", content))

    def reply_json(self, value):
        self.reply(json.dumps(value))

    def fail(self, status: int = 500):
        """Queue one error answer with this HTTP status."""
        self.queue.append(("fail", status))

    def raw(self, body: bytes | dict):
        """Queue one 200 answer with this exact body (a broken shape, say)."""
        self.queue.append(("raw", body))

    def delay(self, seconds: float, content: str = "too late"):
        """Queue one answer given only after a pause (to make the client time out)."""
        self.queue.append(("delay", seconds, content))

    def _next(self, body: dict):
        with self._lock:
            if self.queue:
                return self.queue.popleft()
        result = self.handler(body)
        return ("fail", result) if isinstance(result, int) else ("reply", result)

    @staticmethod
    def completion(content: str, model: str) -> dict:
        return {
            "id": f"chatcmpl-fake-{time.monotonic_ns()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }

    # ---- reading what was asked ----
    def bodies(self) -> list[dict]:
        return [r["body"] for r in self.requests]

    def messages(self, index: int = -1) -> dict[str, str]:
        """role -> content of one request's messages."""
        return {m["role"]: m["content"] for m in self.requests[index]["body"]["messages"]}

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_llm(settings):
    """A running fake model server; settings point the product's model calls at it."""
    fake = FakeLLM().start()
    settings.LLM_BASE_URL = fake.url
    settings.LLM_API_KEY = KEY
    settings.LLM_MODEL = MODEL
    try:
        yield fake
    finally:
        fake.stop()
