"""Checks a tool's arguments against its input schema, so the HTTP route and MCP refuse alike, and hands
the services parsed values.

JSON Schema does the structure and the bounds; the few rules it cannot state (ISO dates, the metadata's
size, repeated item ids) are checked here too. Every refusal names the field and the bound it broke. Every
date argument is parsed here, once, into a GivenTime: a datetime that keeps the caller's own text, for the
answers that echo it (search's and recall's `as_of`).
"""

import json
from datetime import UTC, date, datetime, time

from jsonschema import Draft202012Validator

from .errors import InvalidArguments
from .limits import DATE_MAX, ITEM_METADATA_MAX_BYTES


# An ISO day, or an ISO time that starts with one; parse_date checks the rest.
DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ].*)?$"
ISO_DAY_LENGTH = len("YYYY-MM-DD")
ERRORS_LISTED = 20  # a refusal lists this many of the arguments' faults; the first is the one it names


class GivenTime(datetime):
    """A date argument as a service receives it: a datetime (compared, filtered and stored as one) that also
    keeps `text`, the caller's own words, so an answer can echo them unchanged.

    Only the value validate() hands over carries `text`: a datetime worked out from it (arithmetic, a copy)
    has none, and reading it there raises AttributeError rather than echo something the caller never wrote.
    """

    __slots__ = ("text",)

    @classmethod
    def given(cls, parsed: datetime, text: str) -> "GivenTime":
        value = cls(parsed.year, parsed.month, parsed.day, parsed.hour, parsed.minute, parsed.second,
                    parsed.microsecond, parsed.tzinfo, fold=parsed.fold)
        value.text = text
        return value


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


def parse_date(value: str, field: str) -> GivenTime:
    """An ISO day (YYYY-MM-DD, read as its midnight UTC) or an ISO time starting with one (UTC when it names
    no offset), keeping `value` as its text; InvalidArguments naming `field` when it is neither."""
    try:
        if len(value) == ISO_DAY_LENGTH:
            parsed = datetime.combine(date.fromisoformat(value), time(), tzinfo=UTC)
        else:
            parsed = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidArguments(
            f"{field}: not an ISO day (YYYY-MM-DD) or ISO time (got {value!r})", field=field, bound="ISO 8601"
        ) from None
    return GivenTime.given(parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC), value)


def _parse_dates(schema: dict, value, path: list):
    """`value` with every string the schema marks as a date parsed, in a new structure (the caller's is left
    as it was). Fields are parsed in the schema's order, so the first bad date named is always the same."""
    if isinstance(value, dict):
        parsed = dict(value)
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                if sub.get("pattern") == DATE_PATTERN:
                    parsed[name] = parse_date(value[name], _field([*path, name]))
                else:
                    parsed[name] = _parse_dates(sub, value[name], [*path, name])
        return parsed
    if isinstance(value, list) and "items" in schema:
        return [_parse_dates(schema["items"], entry, [*path, i]) for i, entry in enumerate(value)]
    return value


def validate(schema: dict, arguments) -> dict:
    """The arguments, checked, with every date parsed into a GivenTime; raises InvalidArguments naming the
    first field at fault (and listing all of them)."""
    if arguments is None:
        arguments = {}
    errors = sorted(Draft202012Validator(schema).iter_errors(arguments), key=lambda e: list(e.absolute_path))
    if errors:
        described = [_describe(e) for e in errors[:ERRORS_LISTED]]
        first = described[0]
        raise InvalidArguments(first["message"], field=first["field"], bound=first["bound"], errors=described)
    _check_nul(arguments, [])
    parsed = _parse_dates(schema, arguments, [])
    items = arguments.get("items") if isinstance(arguments, dict) else None
    if isinstance(items, list):
        _check_items(items)
    return parsed


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
    """A date argument's schema: validate() parses what matches it into a GivenTime."""
    return {"type": "string", "maxLength": DATE_MAX, "pattern": DATE_PATTERN, "description": description}
