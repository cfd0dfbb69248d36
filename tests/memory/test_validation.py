"""validate()'s quick yes (memory/validation.py `_passes`, fastjsonschema's compiled code) against jsonschema,
which finds and names the faults: on every tool's schema and the import's, generated arguments, valid and
near-valid, get the quick yes only where jsonschema finds no fault, and valid ones get it (else every call
would pay for jsonschema again)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator

from memory.portability.format import LINE_SCHEMA
from memory.tools import TOOLS
from memory.validation import _passes

SETTINGS = settings(
    max_examples=20, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)
SCHEMAS = {**{tool.name: tool.input_schema for tool in TOOLS}, "import line": LINE_SCHEMA}
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(["x\n", "2024-01-01\n", "\u2028", "😀" * 3]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _valid(schema, value) -> bool:
    return Draft202012Validator(schema).is_valid(value)


def _swap_one_leaf(value, data):
    """`value` with one of its values (at any depth) replaced by arbitrary JSON, or one key added."""
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value)))
        return {**value, key: _swap_one_leaf(value[key], data)}
    if isinstance(value, dict):
        return {**value, data.draw(st.text(max_size=8)): data.draw(JSON)}
    if isinstance(value, list) and value:
        i = data.draw(st.integers(0, len(value) - 1))
        return [*value[:i], _swap_one_leaf(value[i], data), *value[i + 1 :]]
    return data.draw(JSON)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@SETTINGS
@given(data=st.data())
def test_the_quick_check_says_yes_to_valid_arguments_and_never_to_faulty_ones(name, data):
    schema = SCHEMAS[name]
    valid = data.draw(from_schema(schema))
    assert _passes(schema, valid)
    changed = _swap_one_leaf(valid, data)
    if _passes(schema, changed):
        assert _valid(schema, changed), changed


@pytest.mark.parametrize(
    "value",
    [
        {"items": [{"text": "hi", "author": "Ann\n"}]},  # jsonschema's `$` lets one line feed through
        {"items": [{"text": "hi", "at": "2024-01-01\n"}]},
        {"items": [{"text": "hi", "kind": "letter"}]},
        {"items": [{"text": ""}]},
        {"items": [{"text": "x" * 100_001}]},
        {"items": [{"text": "hi", "extra": 1}]},
        {"items": []},
        {"items": [{"text": True}]},
        {},
    ],
)
def test_the_quick_check_refuses_what_jsonschema_refuses_or_lets_jsonschema_decide(value):
    schema = SCHEMAS["memory_add"]
    assert not (_passes(schema, value) and not _valid(schema, value))


def test_an_integer_written_as_a_float_and_a_boolean_are_judged_as_jsonschema_judges_them():
    schema = SCHEMAS["memory_grep"]
    for limit in (2.0, True, 2.5, 51.0):
        arguments = {"pattern": "q", "limit": limit}
        assert not (_passes(schema, arguments) and not _valid(schema, arguments))
