"""The clients' generated models and methods follow /v1/schema: regenerated from the document the service
serves, they equal what is committed; and every /v1/memory/ operation has its method in both clients, with the
arguments its schema names, and no client has a method the service lacks."""

import importlib.util
import inspect
import keyword
import re
from pathlib import Path

import pytest
from django.test import Client
from twin_memory import AsyncTwinMemory, TwinMemory

CLIENTS = Path(__file__).resolve().parents[2] / "clients"
spec = importlib.util.spec_from_file_location("clients_generate", CLIENTS / "generate.py")
assert spec is not None and spec.loader is not None
generate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generate)

# Client methods that are no route of their own.
PYTHON_HELPERS = {"for_account", "close", "aclose", "export_lines"}
TYPESCRIPT_HELPERS = {"constructor", "forAccount", "exportToFile", "toJSON"}


@pytest.fixture
def document(db):
    return Client().get("/v1/schema", headers={"Accept": "application/json"}).json()


def test_the_generated_code_is_what_the_schema_makes(document):
    stale = [str(path) for path, text in generate.outputs(document).items() if (CLIENTS / path).read_text() != text]
    assert stale == [], f"run .venv/bin/python clients/generate.py: {stale} differ from what /v1/schema makes"


def python_method(operation_id: str) -> str:
    name = operation_id.removeprefix("memory_")
    return name + "_" if keyword.iskeyword(name) else name


def public_methods(cls) -> set[str]:
    return {name for name, member in inspect.getmembers(cls) if not name.startswith("_") and callable(member)}


@pytest.mark.parametrize("client", [TwinMemory, AsyncTwinMemory])
def test_the_python_clients_have_one_method_per_operation_and_no_other(document, client):
    operations = {op.operation_id for op in generate.operations(document)}
    assert {python_method(o) for o in operations} == public_methods(client) - PYTHON_HELPERS
    for op in generate.operations(document):
        if op.arguments is None:
            continue
        parameters = inspect.signature(getattr(client, python_method(op.operation_id))).parameters
        named = {name.removesuffix("_") for name in parameters if name != "self"}
        assert named == set(op.arguments.get("properties", {})), op.operation_id


def test_the_typescript_client_has_one_method_per_operation_and_no_other(document):
    source = "\n".join(path.read_text() for path in sorted((CLIENTS / "typescript" / "src").glob("*.ts")))
    defined = set(re.findall(r"^  (?:async )?(?:\*)?([a-z]\w*)\(", source, re.MULTILINE))
    operations = {generate.camel(op.operation_id.removeprefix("memory_")) for op in generate.operations(document)}
    assert operations == defined - TYPESCRIPT_HELPERS
