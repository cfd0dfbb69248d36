"""The OpenAPI schema and the docs page."""

from django.test import Client


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
