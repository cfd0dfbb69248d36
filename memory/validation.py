"""Checks a tool's arguments against its input schema, so the HTTP route and MCP refuse alike, and hands
the services parsed values.

JSON Schema does the structure and the bounds; the few rules it cannot state (ISO dates, the metadata's
size, repeated item ids) are checked here too. Every refusal names the field and the bound it broke. Every
date argument is parsed here, once, into a GivenTime: a datetime that keeps the caller's own text, for the
answers that echo it (search's and recall's `as_of`).
"""

import json
import re
from collections.abc import Callable
from datetime import UTC, date, datetime, time
from typing import Any

import fastjsonschema
from jsonschema import Draft202012Validator

from memory.secrets.detect import find_secret

from .errors import InvalidArguments
from .limits import (
    DATE_EARLIEST,
    DATE_LATEST,
    DATE_MAX,
    ITEM_METADATA_MAX_BYTES,
    LINE_BREAKERS,
    OFFSET_MAX,
    OFFSET_MIN,
    ONE_LINE,
    PLAIN_KEY,
    UNNAMED_KEY,
)

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
    text: str

    @classmethod
    def given(cls, parsed: datetime, text: str) -> "GivenTime":
        value = cls(
            parsed.year,
            parsed.month,
            parsed.day,
            parsed.hour,
            parsed.minute,
            parsed.second,
            parsed.microsecond,
            parsed.tzinfo,
            fold=parsed.fold,
        )
        value.text = text
        return value


# A one-line field, as its schema declares it. The schema's `$` lets one trailing line feed through (Python's
# re.search), so validate() checks every such field again with _BREAKS, which misses nothing.
ONE_LINE_PATTERN = f"^[^{LINE_BREAKERS}]*$"
_BREAKS = re.compile(f"[{LINE_BREAKERS}]")
# A lone surrogate (json.loads reads "\ud800" into one) cannot be stored, logged or encoded as UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")
# A key a caller chose is named in a refusal only when it is plainly a name (limits.PLAIN_KEY), and not a
# secret (an AWS key id is 20 letters and digits).
_PLAIN_KEY = re.compile(PLAIN_KEY)


def _nameable(key: str) -> bool:
    return bool(_PLAIN_KEY.match(key)) and find_secret(key) is None


_JSON_TYPES = {
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    list: "an array",
    dict: "an object",
    type(None): "null",
}


def _field(path, *, screened: bool = True) -> str:
    """A field's name in a refusal. `screened` off: the path holds only the schema's own field names and
    indices (no caller's key to screen for a secret, which every checked item would otherwise pay for)."""
    out = ""
    for part in path:
        if screened and not isinstance(part, int) and not _nameable(part):
            part = UNNAMED_KEY  # never echo a caller's key that is not plainly a name
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "arguments"


def _got(value) -> str:
    """What a refused value was, without the value: its JSON type."""
    return _JSON_TYPES.get(type(value), "another type")


ONE_LINE_MESSAGE = "one line: no line breaks, tabs or other control characters, nor bidirectional controls"


def one_line_refused(field: str) -> InvalidArguments:
    """The refusal of a line break or bidirectional control in a one-line field."""
    return InvalidArguments(f"{field}: {ONE_LINE_MESSAGE}", field=field, bound=ONE_LINE)


def _describe(error) -> dict:
    field = _field(error.absolute_path)
    v, bound, inst = error.validator, error.validator_value, error.instance
    if v == "maxLength":
        message = f"{field}: at most {bound:,} characters (got {len(inst):,})"
    elif v == "minLength":
        message = f"{field}: at least {bound} character{'s' if bound != 1 else ''}, so it cannot be empty"
    elif v in ("maximum", "minimum"):
        low, high = error.schema.get("minimum"), error.schema.get("maximum")
        message = f"{field}: from {low} to {high} (got a {'larger' if v == 'maximum' else 'smaller'} number)"
    elif v in ("maxItems", "minItems"):
        low, high = error.schema.get("minItems"), error.schema.get("maxItems")
        message = f"{field}: {low} to {high} entries (got {len(inst)})"
    elif v == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(inst) - set(allowed))
        name = extra[0] if _nameable(extra[0]) else UNNAMED_KEY
        field = f"{field}.{name}" if field != "arguments" else name
        message = f"{field}: not a known field; the fields are {', '.join(allowed) or 'none'}"
    elif v == "required":
        name = error.message.split("'")[1]
        field = f"{field}.{name}" if field != "arguments" else name
        message = f"{field}: required"
    elif v == "type":
        message = (
            f"{field}: must be {'an' if bound in ('integer', 'array', 'object') else 'a'} {bound} (got {_got(inst)})"
        )
    elif v == "pattern" and bound == DATE_PATTERN:
        message = f"{field}: not an ISO day (YYYY-MM-DD) or ISO time"
        bound = "ISO 8601"
    elif v == "pattern" and bound == ONE_LINE_PATTERN:
        message, bound = f"{field}: {ONE_LINE_MESSAGE}", ONE_LINE
    elif v == "enum":
        message = f"{field}: one of {', '.join(map(str, bound))}"
    else:  # jsonschema's own message quotes the value: name the rule instead
        message = f"{field}: breaks the schema's {v} rule"
    return {"field": field, "message": message, "bound": bound if v != "type" else None}


def parse_date(value: str, field: str) -> GivenTime:
    """An ISO day (YYYY-MM-DD, read as its midnight UTC) or an ISO time starting with one (UTC when it names
    no offset), that the stack can hold: an offset from OFFSET_MIN to OFFSET_MAX, and a UTC value from
    DATE_EARLIEST to DATE_LATEST; kept with `value` as its text. InvalidArguments naming `field` otherwise."""
    parsed: datetime | None  # None: out of the stack's range
    try:
        if len(value) == ISO_DAY_LENGTH:
            parsed = datetime.combine(date.fromisoformat(value), time(), tzinfo=UTC)
        else:
            parsed = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidArguments(
            f"{field}: not an ISO day (YYYY-MM-DD) or ISO time", field=field, bound="ISO 8601"
        ) from None
    parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    offset = parsed.utcoffset()  # never None: the value is aware
    if offset is None or not OFFSET_MIN <= offset <= OFFSET_MAX:
        raise InvalidArguments(f"{field}: a UTC offset from -12:00 to +14:00", field=field, bound="-12:00 to +14:00")
    try:
        parsed.astimezone(UTC)  # year 0 or 10000 in UTC overflows here
    except OverflowError:
        parsed = None
    if parsed is None or not DATE_EARLIEST <= parsed <= DATE_LATEST:
        raise InvalidArguments(
            f"{field}: from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z in UTC",
            field=field,
            bound=f"{DATE_EARLIEST.isoformat()} to {DATE_LATEST.isoformat()}",
        )
    return GivenTime.given(parsed, value)


def _parsed(schema: dict, value, path: list):
    """`value` as the code takes it, in a new structure (the caller's is left as it was): every string the
    schema marks as a date parsed, and every integer field an int. Fields are parsed in the schema's order, so
    the first bad date named is always the same."""
    if isinstance(value, dict):
        parsed = dict(value)
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                if sub.get("pattern") == DATE_PATTERN:
                    parsed[name] = parse_date(value[name], _field([*path, name], screened=False))
                else:
                    parsed[name] = _parsed(sub, value[name], [*path, name])
        return parsed
    if isinstance(value, list) and "items" in schema:
        return [_parsed(schema["items"], entry, [*path, i]) for i, entry in enumerate(value)]
    if isinstance(value, float) and schema.get("type") == "integer":
        # JSON Schema counts 2.0 as an integer (the schema passed it); Python does not: ranked[:2.0] raises.
        return int(value)
    return value


# Each schema compiled to Python once (the tools' and the import's: module constants, so a handful).
_compiled: dict[int, tuple[dict, Callable[[Any], Any]]] = {}


def _passes(schema: dict, arguments) -> bool:
    """Whether `arguments` meet `schema`, by fastjsonschema's code compiled from it: jsonschema walks the
    arguments anew each call, a cost every added item would pay (bench/README.md "Adding"). It only says
    yes: on a no, jsonschema finds the faults to name. The tools' schemas use only keywords that mean the
    same in its draft 7 as in 2020-12, and it reads `$` as the end of the string, where
    jsonschema lets one line feed through, so it is never the laxer (tests/memory/test_validation.py)."""
    entry = _compiled.get(id(schema))
    if entry is None or entry[0] is not schema:
        entry = (
            schema,
            fastjsonschema.compile(schema, use_default=False, use_formats=False, detailed_exceptions=False),
        )
        _compiled[id(schema)] = entry
    try:
        entry[1](arguments)
    except fastjsonschema.JsonSchemaException:
        return False
    return True


def validate(schema: dict, arguments) -> dict:
    """The arguments, checked, with every date parsed into a GivenTime and every integer an int; raises
    InvalidArguments naming the first field at fault (and listing all of them)."""
    if arguments is None:
        arguments = {}
    errors = (
        []
        if _passes(schema, arguments)
        else sorted(Draft202012Validator(schema).iter_errors(arguments), key=lambda e: list(e.absolute_path))
    )
    if errors:
        described = [_describe(e) for e in errors[:ERRORS_LISTED]]
        first = described[0]
        raise InvalidArguments(first["message"], field=first["field"], bound=first["bound"], errors=described)
    _check_nul(arguments, [])
    for path, value in _with_pattern(ONE_LINE_PATTERN, schema, arguments, []):
        if _BREAKS.search(value):
            raise one_line_refused(_field(path))
    parsed = _parsed(schema, arguments, [])
    items = arguments.get("items") if isinstance(arguments, dict) else None
    if isinstance(items, list):
        _check_items(items)
    return parsed


def _with_pattern(pattern: str, schema: dict, value, path: list):
    """Yield (path, value) for every string whose schema has `pattern` (its field is named only when refused:
    naming it screens each key for secrets)."""
    if isinstance(value, str) and schema.get("pattern") == pattern:
        yield path, value
    elif isinstance(value, dict):
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                yield from _with_pattern(pattern, sub, value[name], [*path, name])
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, entry in enumerate(value):
            yield from _with_pattern(pattern, schema["items"], entry, [*path, i])


def _check_nul(value, path: list) -> None:
    """PostgreSQL stores no NUL character in text or JSON, and no string holds a lone surrogate in UTF-8:
    refuse either by name rather than fail later (or echo it back in an error)."""
    if isinstance(value, str):
        if "\x00" in value:
            field = _field(path)
            raise InvalidArguments(f"{field}: cannot contain a NUL (\\u0000) character", field=field)
        if _SURROGATE.search(value):
            field = _field(path)
            raise InvalidArguments(
                f"{field}: not valid Unicode: it holds a lone surrogate (\\ud800 to \\udfff)",
                field=field,
                bound="Unicode",
            )
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
