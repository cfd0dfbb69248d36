"""The OpenAPI schema and the docs page."""

from django.test import Client

from accounts.auth import ACCOUNT_HEADER
from memory.tools import TOOLS


def test_the_schema_describes_the_api(db):
    response = Client().get("/v1/schema", headers={"Accept": "application/json"})
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert "/v1/me" in schema["paths"]


def test_the_docs_page_serves_its_assets_locally(db):
    response = Client().get("/v1/docs")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger-ui" in html
    assert "cdn." not in html  # served from the package, never a CDN


def test_the_schema_names_every_status_memory_add_answers_and_what_forget_erased(db):
    schema = Client().get("/v1/schema", headers={"Accept": "application/json"}).json()
    answer = schema["paths"]["/v1/memory/add"]["post"]["responses"]["200"]["content"]["application/json"]
    item = answer["schema"]["properties"]["items"]["items"]
    assert item["properties"]["status"]["enum"] == ["added", "edited", "unchanged", "duplicate", "refused"]
    assert {"duplicate_of", "field", "secret", "redacted"} <= set(item["properties"])
    forget = schema["paths"]["/v1/memory/forget"]["post"]["responses"]["200"]["content"]["application/json"]
    assert forget["schema"]["properties"]["erased"]["required"] == ["items", "versions", "passages", "facts"]


def test_the_schema_declares_the_bearer_and_the_end_user_header_and_every_memory_route_requires_both(db):
    schema = Client().get("/v1/schema", headers={"Accept": "application/json"}).json()
    schemes = schema["components"]["securitySchemes"]
    assert schemes["bearer"]["type"] == "http" and schemes["bearer"]["scheme"] == "bearer"
    assert schemes["endUser"] == {**schemes["endUser"], "type": "apiKey", "in": "header", "name": ACCOUNT_HEADER}
    memory = [
        (path, method, operation)
        for path, methods in schema["paths"].items()
        if path.startswith("/v1/memory/")
        for method, operation in methods.items()
    ]
    assert len(memory) >= len([tool for tool in TOOLS if not tool.local_only]) + 2, "the tools, export and import"
    for path, method, operation in memory:
        assert operation.get("security") == [{"bearer": [], "endUser": []}], (method, path)
