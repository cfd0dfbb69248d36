"""Sign in to /v1/mcp with the official `mcp` Python SDK's OAuth client, as claude.ai or ChatGPT would.

Run it in its own process (the SDK is an async client of its own, with its own event loop):

    python tests/sdk/oauth_client.py URL EMAIL PASSWORD --access write|read
        [--auth-method none|client_secret_post|client_secret_basic] [--phrase P]

The SDK's `OAuthClientProvider` does the protocol: it meets the 401, discovers the protected-resource and
authorization-server metadata, registers dynamically, sends the person to the authorization URL with PKCE
S256 and the resource, exchanges the code, and refreshes. The person is played by a headless helper: the
redirect handler opens the URL in a cookie-keeping HTTP client, logs in to the console, submits the consent
card with the chosen access, and hands the code (with state and iss) to the callback handler.

Then it initializes, lists the tools, calls one (memory_add then memory_grep for Read and save, memory_grep
for Read only), forces a refresh by expiring the access token on the client side, and calls again. It prints
ONE JSON line with what it saw, including every HTTP exchange.
"""

import argparse
import asyncio
import json
import sys
import time
import traceback
from html.parser import HTMLParser
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

REDIRECT_URI = "http://localhost:3030/callback"  # loopback: never listened on, the helper reads the redirect


class MemoryStorage:
    """The SDK's TokenStorage, in memory."""

    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


class FormReader(HTMLParser):
    """The inputs, the selected options and the first h1 of a page: all a headless person needs."""

    def __init__(self):
        super().__init__()
        self.fields: dict[str, str] = {}
        self.radios: dict[str, list[str]] = {}
        self.h1, self._in_h1, self._select = "", False, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "input" and attrs.get("name"):
            if attrs.get("type") == "radio":
                self.radios.setdefault(attrs["name"], []).append(attrs.get("value", ""))
                if "checked" in attrs:
                    self.fields[attrs["name"]] = attrs.get("value", "")
            else:
                self.fields.setdefault(attrs["name"], attrs.get("value") or "")
        elif tag == "select":
            self._select = attrs.get("name")
        elif tag == "option" and self._select and ("selected" in attrs or self._select not in self.fields):
            self.fields[self._select] = attrs.get("value", "")
        elif tag == "h1":
            self._in_h1 = True

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = None
        elif tag == "h1":
            self._in_h1 = False

    def handle_data(self, data):
        if self._in_h1:
            self.h1 += data


def read_form(html: str) -> FormReader:
    reader = FormReader()
    reader.feed(html)
    return reader


class HeadlessPerson:
    """Plays the person at the browser: log in, read the card, choose the access, allow."""

    def __init__(self, email: str, password: str, access: str, seen: dict):
        self.email, self.password, self.access, self.seen = email, password, access, seen
        self.result: AuthorizationCodeResult | None = None

    async def redirect_handler(self, authorization_url: str) -> None:
        self.seen.setdefault("authorization_urls", []).append(authorization_url)
        async with httpx2.AsyncClient(follow_redirects=False, timeout=20) as browser:
            first = await browser.get(authorization_url)
            assert first.status_code == 302, f"authorize answered {first.status_code}, not a log-in redirect"
            login_url = urljoin(authorization_url, first.headers["location"])
            login_page = await browser.get(login_url)
            login = read_form(login_page.text)
            logged_in = await browser.post(
                login_url,
                data={
                    "csrfmiddlewaretoken": login.fields["csrfmiddlewaretoken"],
                    "next": login.fields["next"],
                    "username": self.email,
                    "password": self.password,
                },
            )
            assert logged_in.status_code == 302, f"log-in answered {logged_in.status_code}"
            card_url = urljoin(login_url, logged_in.headers["location"])
            assert card_url == authorization_url, (card_url, authorization_url)
            card_page = await browser.get(card_url)
            assert card_page.status_code == 200, f"the card answered {card_page.status_code}"
            card = read_form(card_page.text)
            self.seen["card"] = {
                "title": " ".join(card.h1.split()),
                "accesses": card.radios.get("access", []),
                "project": card.fields.get("project"),
                "end_user": card.fields.get("end_user"),
                "x_frame_options": card_page.headers.get("x-frame-options"),
                "csp": card_page.headers.get("content-security-policy"),
            }
            answer = await browser.post(card_url, data={**card.fields, "access": self.access, "allow": "1"})
            assert answer.status_code == 302, f"the card's answer was {answer.status_code}: {answer.text[:300]}"
        location = answer.headers["location"]
        self.seen.setdefault("redirects", []).append(location)
        query = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        self.result = AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    async def callback_handler(self) -> AuthorizationCodeResult:
        result, self.result = self.result, None
        assert result is not None, "the redirect came first"
        return result


def exchange_recorder(exchanges: list[dict]):
    """httpx2 hooks recording each request (the MCP POSTs and the OAuth ones) and its status."""

    async def on_request(request: httpx2.Request) -> None:
        entry = {"http": request.method, "path": request.url.path, "authorized": "authorization" in request.headers}
        if request.url.path == "/oauth/token":
            form = parse_qs((request.content or b"").decode())
            entry.update(
                grant_type=form.get("grant_type", [None])[0],
                resource=form.get("resource", [None])[0],
                basic_auth=request.headers.get("authorization", "").startswith("Basic "),
                secret_in_body="client_secret" in form,
            )
        elif request.method == "POST" and request.url.path.endswith("/mcp"):
            try:
                entry["method"] = json.loads(request.content or b"null").get("method")
            except (ValueError, AttributeError):
                pass
        exchanges.append(entry)

    async def on_response(response: httpx2.Response) -> None:
        exchanges[-1]["status"] = response.status_code
        if response.status_code == 401:
            exchanges[-1]["www_authenticate"] = response.headers.get("www-authenticate")

    return {"request": [on_request], "response": [on_response]}


def tool_text(result) -> dict:
    texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
    return {"text": "\n".join(texts), "is_error": bool(result.is_error)}


async def run(url: str, email: str, password: str, access: str, auth_method: str, phrase: str) -> dict:
    exchanges: list[dict] = []
    seen: dict = {"exchanges": exchanges}
    storage = MemoryStorage()
    person = HeadlessPerson(email, password, access, seen)
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata.model_validate(
            {
                "client_name": "SDK test client",
                "redirect_uris": [REDIRECT_URI],
                "token_endpoint_auth_method": auth_method,
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            }
        ),
        storage=storage,
        redirect_handler=person.redirect_handler,
        callback_handler=person.callback_handler,
    )
    http = create_mcp_http_client(auth=provider, timeout=httpx2.Timeout(30.0))
    http.event_hooks = exchange_recorder(exchanges)
    async with http:
        async with streamable_http_client(url, http_client=http) as (read_stream, write_stream):
            async with ClientSession(read_stream, write_stream, read_timeout_seconds=30) as session:
                initialized = await session.initialize()
                seen["protocol_version"] = initialized.protocol_version
                assert storage.client_info is not None and storage.tokens is not None, "registered and signed in"
                seen["client"] = storage.client_info.model_dump(mode="json", exclude_none=True)
                seen["first_tokens"] = storage.tokens.model_dump(mode="json")
                seen["tools"] = [tool.name for tool in (await session.list_tools()).tools]
                if access == "write":
                    added = await session.call_tool(
                        "memory_add",
                        {
                            "items": [{"id": "sdk-oauth-1", "text": f"My favourite tram is the {phrase} line."}],
                            "wait": True,
                        },
                    )
                    seen["add"] = tool_text(added)
                seen["grep"] = tool_text(await session.call_tool("memory_grep", {"pattern": phrase}))

                # Expire the access token on the client's side: its next request must refresh first.
                provider.context.token_expiry_time = time.time() - 1
                seen["tools_after_refresh"] = [tool.name for tool in (await session.list_tools()).tools]
                seen["grep_after_refresh"] = tool_text(await session.call_tool("memory_grep", {"pattern": phrase}))
                assert storage.tokens is not None
                seen["refreshed_tokens"] = storage.tokens.model_dump(mode="json")
    return seen


def _leaves(exc: BaseException) -> list[str]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [f"{type(exc).__name__}: {exc}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("email")
    parser.add_argument("password")
    parser.add_argument("--access", choices=("write", "read"), default="write")
    parser.add_argument("--auth-method", choices=("none", "client_secret_post", "client_secret_basic"), default="none")
    parser.add_argument("--phrase", default="Sapphire Heron")
    args = parser.parse_args()
    try:
        seen = asyncio.run(run(args.url, args.email, args.password, args.access, args.auth_method, args.phrase))
    except BaseException as exc:  # noqa: BLE001 - the caller wants one JSON line, whatever happened
        print(json.dumps({"ok": False, "error": "; ".join(_leaves(exc)), "traceback": traceback.format_exc()}))
        return 1
    print(json.dumps({"ok": True, **seen}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
