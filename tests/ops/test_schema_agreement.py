"""The MCP inputSchema, the OpenAPI schema and the route's validation agree on every bound.

Cases are generated from the schema that tools/list publishes: for each bound, the value at the bound and
one past it, sent both to the HTTP route and over MCP tools/call; both must accept or both refuse.
"""

import copy

from django.test import Client

MINIMAL = {
    "memory_search": {"query": "q"},
    "memory_grep": {"pattern": "p"},
    "memory_read": {"path": "index.md"},
    "memory_ls": {},
    "memory_around": {"passage_id": "th_0000000000000000/p_0001"},
    "memory_history": {"subject": "Alice"},
    "memory_latest": {},
    "memory_overview": {},
    "memory_add": {"items": [{"text": "x"}]},
}


def bound_cases(schema: dict):
    """(path, value, should_pass) for every bound in a property schema."""
    if schema.get("type") == "string":
        if "maxLength" in schema:
            yield "x" * schema["maxLength"] if "pattern" not in schema else None, True
            yield "x" * (schema["maxLength"] + 1), False
        if schema.get("minLength", 0) > 0:
            yield "", False
    if schema.get("type") == "integer":
        yield schema["minimum"], True
        yield schema["maximum"], True
        yield schema["minimum"] - 1, False
        yield schema["maximum"] + 1, False
        yield "3", False
    if "enum" in schema:
        yield schema["enum"][0], True
        yield "not-" + schema["enum"][0], False


def cases(tools):
    for tool in tools:
        base = MINIMAL[tool["name"]]
        for name, prop in tool["inputSchema"]["properties"].items():
            targets: list[tuple[tuple, dict]] = [((name,), prop)]
            if prop.get("type") == "array" and prop["items"].get("type") == "object":
                targets = [((name, 0, sub), sub_prop) for sub, sub_prop in prop["items"]["properties"].items()]
                yield tool["name"], base, (name,), [{"text": "x"}] * prop["maxItems"], True
                yield tool["name"], base, (name,), [{"text": "x"}] * (prop["maxItems"] + 1), False
                yield tool["name"], base, (name,), [], False
            for path, sub_schema in targets:
                for value, ok in bound_cases(sub_schema):
                    if value is not None:
                        yield tool["name"], base, path, value, ok
        yield tool["name"], base, ("unexpected",), 1, False


def with_value(base: dict, path: tuple, value):
    arguments = copy.deepcopy(base)
    target = arguments
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return arguments


def test_mcp_and_http_accept_and_refuse_alike(api):
    api.add({"text": "something to read", "id": "seed"})
    tools = api.mcp("tools/list").json()["result"]["tools"]
    checked = 0
    for name, base, path, value, should_pass in cases(tools):
        arguments = with_value(base, path, value)
        if name == "memory_add":
            arguments["wait"] = False
        http = api.tool(name.removeprefix("memory_"), **arguments)
        rpc = api.call(name, **arguments)
        http_refused = http.status_code == 400
        mcp_refused = rpc.get("error", {}).get("code") == -32602
        assert http_refused == mcp_refused == (not should_pass), (name, path, str(value)[:40], http.content[:200])
        if http_refused:
            assert rpc["error"]["data"]["field"] == http.json()["field"]
        checked += 1
    assert checked > 60


def test_the_openapi_schema_carries_the_same_input_schemas(api):
    tools = api.mcp("tools/list").json()["result"]["tools"]
    openapi = Client().get("/v1/schema", headers={"Accept": "application/json"}).json()
    for tool in tools:
        route = f"/v1/memory/{tool['name'].removeprefix('memory_')}"
        body = openapi["paths"][route]["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert body == tool["inputSchema"], route
        assert openapi["paths"][route]["post"]["description"] == tool["description"]
