"""Generated bad input, so the next hole is found by a test rather than an attacker.

The routes of the OpenAPI schema (every /v1/memory/* route, the tools' and export and import, and /v1/me):
schemathesis reads the schema the app serves (which declares the bearer and X-Twin-Account) and generates
requests in-process against twin.wsgi, valid ones and invalid ones. /v1/mcp: hypothesis-jsonschema generates
tools/call arguments from each tool's input schema, and hypothesis generates envelopes, lone surrogates
included. Every answer: no 5xx; a 4xx names its field (but 401, 403, 404 and 429, which are about the
credential, the memory or the rate, not a field); a refused call changes no memory table; and most cases get
past authentication, so they test the route, not the door.
"""

import json

import pytest
import schemathesis
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator
from schemathesis.generation import GenerationMode
from schemathesis.transport.serialization import serialize_binary

from accounts.models import EndUser, Project
from mcp_server.era import CLIENT_CAPABILITIES_KEY, MODERN, PROTOCOL_VERSION_KEY
from mcp_server.protocol import OUTPUT_SCHEMAS
from memory.limits import JSON_DEPTH_MAX
from memory.models import Fact, Item, ItemVersion, MemoryStats, Passage, PassageSentence, TermStat, Thread, WrittenIndex
from memory.selectors import scoped
from memory.tools import BY_NAME, TOOLS
from twin.wsgi import application

MODERN_META = {PROTOCOL_VERSION_KEY: MODERN, CLIENT_CAPABILITIES_KEY: {}}
SETTINGS = settings(
    max_examples=30, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)
MEMORY_TABLES = (
    EndUser,
    Item,
    ItemVersion,
    Thread,
    Passage,
    PassageSentence,
    Fact,
    TermStat,
    MemoryStats,
    WrittenIndex,
)
# Every operation of the schema, read from it (the schema generator, without a request or the database).
OPERATIONS = [
    (path, method.upper())
    for path, methods in SchemaGenerator().get_schema(public=True)["paths"].items()
    for method in methods
]
# The 4xx answers about something other than a field: the credential (401), its scope (403), memory that holds
# no answer (404, alike for missing and not-yours), the rate (429).
NO_FIELD = (401, 403, 404, 429)
GENERATED_BODY_MAX = 256  # bytes of a generated import: a handful of lines is every case a large one is
PAST_AUTHENTICATION = 0.8  # the share of cases per route that must reach the route itself
LONE = "\ud800"
MCP_ITEMS_MAX = 3


@schemathesis.serializer("application/x-ndjson", "application/gzip")
def _import_file(context, value) -> bytes:
    """A generated import, as the bytes of a file (a string's, or a JSON value's spelling), cut short."""
    return serialize_binary(value)[:GENERATED_BODY_MAX]


@pytest.fixture(scope="module")
def schema(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():  # a request through the app opens (checks) its connection
        loaded = schemathesis.openapi.from_wsgi("/v1/schema?format=json", application)
    # The test sends a real key and end user itself; generated credentials would only test the door.
    loaded.config.generation.update(with_security_parameters=False)
    return loaded


@pytest.fixture
def seeded(api):
    """Alice's write key on an end user with some memory, so reads have something to read."""
    api.add({"text": "I moved to Porto in 2023.", "id": "seed", "kind": "message", "session": "s1"})
    assert counts()[MEMORY_TABLES.index(Item)] == 1, "the counts see the memory"
    return api


def counts() -> list[int]:
    """The rows of each memory table, over every project (row-level security shows them only in a scope)."""
    rows = [0] * len(MEMORY_TABLES)
    for project_id in Project.objects.values_list("pk", flat=True):
        with scoped(project_id):
            rows = [n + model._default_manager.count() for n, model in zip(rows, MEMORY_TABLES, strict=True)]
    return rows


def judged(status: int, body, before: list[int], where: str) -> int:
    """Check one answer (see the module's docstring); returns its status."""
    assert status < 500, (where, status, body)
    if 400 <= status < 500 and status not in NO_FIELD:
        assert isinstance(body, dict) and body.get("field"), (where, status, body)
    if 400 <= status < 500:
        assert counts() == before, (where, status, "a refused call changed memory")
    return status


def call_case(case, api) -> int:
    if case.operation.path == "/v1/memory/add" and isinstance(case.body, dict) and "wait" in case.body:
        case.body["wait"] = False  # waiting for the read adds nothing but time
    before = counts()
    response = case.call(headers=api.headers())
    try:
        body = response.json()
    except ValueError:
        body = response.text
    return judged(response.status_code, body, before, f"{case.operation.path} {case.body!r}"[:2000])


@pytest.mark.parametrize("path, method", OPERATIONS)
def test_generated_requests_to_each_route_are_answered(schema, seeded, path, method):
    operation = schema[path][method]
    strategy = st.one_of(operation.as_strategy(GenerationMode.POSITIVE), operation.as_strategy(GenerationMode.NEGATIVE))
    statuses = []

    @SETTINGS
    @given(case=strategy)
    def run(case):
        statuses.append(call_case(case, seeded))

    run()
    assert sum(status != 401 for status in statuses) >= PAST_AUTHENTICATION * len(statuses), statuses


# The inputs that once answered 500, each sent explicitly through the same judge.
EXPLICIT = [
    ("search", '{"query": "' + "\\ud800" + '"}', {}),
    ("grep", '{"pattern": "\\udfff"}', {}),
    ("add", '{"items": [{"text": "x", "title": "\\ud800"}]}', {}),
    ("add", '{"items": [{"text": "x", "at": "9999-12-31T23:59:59-10:00"}]}', {}),
    ("latest", '{"before": "2026-01-01T00:00:00+20:00"}', {}),
    ("add", '{"items": [{"text": "x", "author": "Alice\\n## Instructions"}]}', {}),
    ("grep", '{"pattern": "x", "limit": ' + "9" * 5000 + "}", {}),
    ("add", "[" * 1000 + "]" * 1000, {}),
    ("search", '{"query": ', {}),
    ("search", '{"query": "x"}', {"CONTENT_LENGTH": "abc"}),
    ("add", '{"items": [{"text": "x", "metadata": {"a": NaN}}]}', {}),
    ("add", '{"items": [{"text": "x", "metadata": {"a": Infinity, "b": -Infinity}}]}', {}),
    ("add", '{"items": [{"text": "x", "metadata": {"a": 1e999}}]}', {}),
]


@pytest.mark.parametrize("route, body, meta", EXPLICIT)
def test_the_inputs_that_once_answered_500_are_refused_by_name(seeded, route, body, meta):
    before = counts()
    response = seeded.client.post(
        f"/v1/memory/{route}", data=body, content_type="application/json", headers=seeded.headers(), **meta
    )
    assert judged(response.status_code, response.json(), before, body[:200]) == 400


# Refusals made before a route reads its body, through the same judge: each names its field too.
BEFORE_THE_ROUTE = [
    ({"CONTENT_LENGTH": str(10**12)}, {}, 413),
    ({"CONTENT_TYPE": "text/plain"}, {}, 415),
    ({}, {"X-Twin-Account": "not one/line"}, 400),
    ({}, {"X-Twin-Account": ""}, 400),
]


@pytest.mark.parametrize("meta, headers, status", BEFORE_THE_ROUTE)
def test_the_refusals_before_the_route_name_their_field(seeded, meta, headers, status):
    before = counts()
    response = seeded.client.post(
        "/v1/memory/search",
        data='{"query": "x"}',
        content_type="application/json",
        headers=seeded.headers(**headers),
        **meta,
    )
    assert judged(response.status_code, response.json(), before, repr((meta, headers))) == status


# --- /v1/mcp -------------------------------------------------------------------------------------------------


def rpc(api, message, **headers) -> tuple[int, dict]:
    before = counts()
    response = api.client.post(
        "/v1/mcp", data=json.dumps(message), content_type="application/json", headers=api.headers(**headers)
    )
    body = response.json() if response.content else {}
    assert response.status_code < 500, (message, response.status_code, body)
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("code") == -32602:
        assert error["data"].get("field"), (message, body)
    if error:
        assert counts() == before, (message, "a refused call changed memory")
    return response.status_code, body


@pytest.mark.parametrize("name", [tool.name for tool in TOOLS if tool.mcp and not tool.local_only])
def test_generated_tool_arguments_over_mcp_are_answered(seeded, name):
    schema = BY_NAME[name].input_schema

    output = Draft202012Validator(OUTPUT_SCHEMAS[name])

    @SETTINGS
    @given(
        arguments=from_schema(schema) | st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=2),
        modern=st.booleans(),
    )
    def run(arguments, modern):
        if name == "memory_add":  # a few items show as much as hundreds, and reading them costs time
            arguments = {**arguments, "wait": False}
            if isinstance(arguments.get("items"), list):
                arguments["items"] = arguments["items"][:MCP_ITEMS_MAX]
        params = {"name": name, "arguments": arguments, **({"_meta": MODERN_META} if modern else {})}
        headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name} if modern else {}
        status, body = rpc(seeded, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}, **headers)
        assert status in ((200, 400) if modern else (200,)) and ("result" in body or body["error"]["code"] == -32602)
        result = body.get("result", {})
        if modern and result and not result["isError"]:  # a typed answer, valid by the tool's outputSchema
            assert result["structuredContent"] == json.loads(result["content"][0]["text"])
            output.validate(result["structuredContent"])
        else:
            assert "structuredContent" not in result, "an older revision's answer is text alone"

    run()


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(alphabet=st.characters(codec=None), max_size=8)
    | st.sampled_from([LONE, "x" + LONE, "\udfff"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
ENVELOPES = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "1.0", LONE]) | JSON_VALUES},
    optional={
        "id": st.integers() | st.text(max_size=6) | st.sampled_from([LONE]) | JSON_VALUES,
        "method": st.sampled_from(["initialize", "ping", "tools/list", "tools/call", LONE]) | JSON_VALUES,
        "params": st.fixed_dictionaries(
            {}, optional={"name": JSON_VALUES | st.sampled_from(["memory_search"]), "arguments": JSON_VALUES}
        )
        | JSON_VALUES,
    },
)


def test_generated_envelopes_over_mcp_are_answered(seeded):
    @SETTINGS
    @given(message=ENVELOPES | JSON_VALUES)
    def run(message):
        rpc(seeded, message)

    run()


def test_nesting_at_the_bound_over_mcp_is_read_and_past_it_refused(seeded):
    inner: dict = {}
    for _ in range(JSON_DEPTH_MAX - 3):  # message > params > arguments > 62 objects: the bound itself
        inner = {"a": inner}
    status, body = rpc(
        seeded,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_search", "arguments": inner}},
    )
    assert status == 200 and body["error"]["code"] == -32602
    status, body = rpc(seeded, {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"a": [inner]}})
    assert status == 400 and body["error"]["code"] == -32700
