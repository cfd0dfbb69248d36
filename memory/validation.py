"""Checks a tool's arguments against its input schema, so the HTTP route and MCP refuse alike.

JSON Schema does the structure and the bounds; the few rules it cannot state (ISO dates, the metadata's
size, repeated item ids) are checked here too. Every refusal names the field and the bound it broke.
"""

import json
from datetime import UTC, date, datetime, time

from jsonschema import Draft202012Validator

from .errors import InvalidArguments
from .limits import DATE_MAX, ITEM_METADATA_MAX_BYTES


# An ISO day, or an ISO time that starts with one; parse_date checks the rest.
DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ].*)?$"


def _field(path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "arguments"


def _describe(error) -> dict:
    field = _field(error.absolute_path)
    v, bound, inst = error.validator, error.validator_value, error.instance
    if v == "maxLength":
        message = f"{field}: at most {bound:,} characters (got {len(inst):,})"
    elif v == "minLength":
        message = f"{field}: at least {bound} character{'s' if bound != 1 else ''}, so it cannot be empty"
    elif v in ("maximum", "minimum"):
        low, high = error.schema.get("minimum"), error.schema.get("maximum")
        message = f"{field}: from {low} to {high} (got {inst})"
    elif v in ("maxItems", "minItems"):
        low, high = error.schema.get("minItems"), error.schema.get("maxItems")
        message = f"{field}: {low} to {high} entries (got {len(inst)})"
    elif v == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(inst) - set(allowed))
        field = f"{field}.{extra[0]}" if field != "arguments" else extra[0]
        message = f"{field}: not a known field; the fields are {', '.join(allowed) or 'none'}"
    elif v == "required":
        name = error.message.split("'")[1]
        field = f"{field}.{name}" if field != "arguments" else name
        message = f"{field}: required"
    elif v == "type":
        message = f"{field}: must be {'an' if bound in ('integer', 'array', 'object') else 'a'} {bound}"
    elif v == "pattern" and bound == DATE_PATTERN:
        message = f"{field}: not an ISO day (YYYY-MM-DD) or ISO time (got {inst!r})"
        bound = "ISO 8601"
    elif v == "enum":
        message = f"{field}: one of {', '.join(map(str, bound))} (got {inst!r})"
    else:
        message = f"{field}: {error.message}"
    return {"field": field, "message": message, "bound": bound if v != "type" else None}


def parse_date(value: str, field: str) -> datetime:
    """An ISO day (YYYY-MM-DD, read as its midnight UTC) or an ISO time starting with one."""
    try:
        if len(value) == 10:
            return datetime.combine(date.fromisoformat(value), time(), tzinfo=UTC)
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidArguments(
            f"{field}: not an ISO day (YYYY-MM-DD) or ISO time (got {value!r})", field=field, bound="ISO 8601"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _date_fields(schema: dict, value, path: list):
    """Yield (field, value) for every string the schema marks as a date."""
    if isinstance(value, dict):
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                if sub.get("pattern") == DATE_PATTERN:
                    yield _field([*path, name]), value[name]
                else:
                    yield from _date_fields(sub, value[name], [*path, name])
    elif isinstance(value, list) and "items" in schema:
        for i, entry in enumerate(value):
            yield from _date_fields(schema["items"], entry, [*path, i])


def validate(schema: dict, arguments) -> dict:
    """The arguments, checked; raises InvalidArguments naming the first field at fault (and all of them)."""
    if arguments is None:
        arguments = {}
    errors = sorted(Draft202012Validator(schema).iter_errors(arguments), key=lambda e: list(e.absolute_path))
    if errors:
        described = [_describe(e) for e in errors[:20]]
        first = described[0]
        raise InvalidArguments(first["message"], field=first["field"], bound=first["bound"], errors=described)
    _check_nul(arguments, [])
    for field, value in _date_fields(schema, arguments, []):
        parse_date(value, field)
    items = arguments.get("items") if isinstance(arguments, dict) else None
    if isinstance(items, list):
        _check_items(items)
    return arguments


def _check_nul(value, path: list) -> None:
    """PostgreSQL stores no NUL character in text or JSON: refuse it by name rather than fail later."""
    if isinstance(value, str):
        if "\x00" in value:
            field = _field(path)
            raise InvalidArguments(f"{field}: cannot contain a NUL (\\u0000) character", field=field)
    elif isinstance(value, dict):
        for key, sub in value.items():
            _check_nul(key, [*path, key])
            _check_nul(sub, [*path, key])
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            _check_nul(sub, [*path, i])


def _check_items(items: list[dict]) -> None:
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        if "metadata" in item:
            size = len(json.dumps(item["metadata"], ensure_ascii=False).encode())
            if size > ITEM_METADATA_MAX_BYTES:
                raise InvalidArguments(
                    f"items[{i}].metadata: at most {ITEM_METADATA_MAX_BYTES:,} bytes as JSON (got {size:,})",
                    field=f"items[{i}].metadata",
                    bound=ITEM_METADATA_MAX_BYTES,
                )
        if "id" in item:
            if item["id"] in seen:
                raise InvalidArguments(
                    f"items[{i}].id: repeats items[{seen[item['id']]}].id; one call may name an id once",
                    field=f"items[{i}].id",
                )
            seen[item["id"]] = i


def date_schema(description: str) -> dict:
    return {"type": "string", "maxLength": DATE_MAX, "pattern": DATE_PATTERN, "description": description}
