"""The export format, version 1 (docs/export-format.md): JSON Lines, a first line naming the format, then
one line per item with its earlier versions and its facts.

Written by `header` and `item_line`; read back by `check_header` and `check_line`, which check a line as
memory_add checks an item (the registry's own schema, through validation.validate) and refuse by line
number and field, never echoing a value.
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from accounts.errors import ApiError
from accounts.models import EndUser

from .. import schema, tools
from ..errors import InvalidArguments
from ..limits import IMPORT_REFUSED_LINES, ITEM_FIELD_MAX, ITEM_ID_MAX, ITEM_TEXT_MAX, PASSAGE_PLACE_MAX, VERSION_MAX
from ..models import Fact, Item, ItemVersion
from ..paths import iso
from ..validation import date_schema, validate

FORMAT = "twin-memory-export"
VERSION = 1  # raised when a line changes in a way an older reader would misread
RETRACTIONS = ("edited", "corrected", "forgotten")  # why a fact was withdrawn (memory/read/facts.py)
ATTRIBUTE_MAX = cast(int, Fact._meta.get_field("attribute").max_length)  # a CharField's: always set


class InvalidImport(ApiError):
    """A file the import refuses: the line and the field at fault and what it broke. HTTP 400; nothing of
    the file is stored."""

    def __init__(self, line: int, field: str, message: str, bound=None):
        super().__init__(400, "invalid_import", f"line {line}: {message}", line=line, field=field)
        if bound is not None:
            self.details["bound"] = bound

    def listed(self) -> dict:
        """This refusal as one entry of a refused file's `lines`."""
        entry = {"line": self.details["line"], "field": self.details["field"], "message": self.message}
        return entry | ({"bound": self.details["bound"]} if "bound" in self.details else {})


def refused_lines(refusals: list[InvalidImport], *, more: bool) -> InvalidImport:
    """A file's refusal naming each of its bad lines (`refusals`, in order, at most IMPORT_REFUSED_LINES; `more`
    when the check stopped there): the first named as a single refusal is, and all of them in `lines`."""
    first = refusals[0]
    first.details["lines"] = [refusal.listed() for refusal in refusals]
    if more:
        first.message += f" (and more bad lines: `lines` names the first {IMPORT_REFUSED_LINES})"
        first.details["more_lines"] = True
    elif len(refusals) > 1:
        first.message += f" (and {len(refusals) - 1} more bad lines, named in `lines`)"
    return first


# ---- writing ----------------------------------------------------------------------------------------------


def header(end_user: EndUser, *, items: int, exported_at: datetime) -> dict:
    """The first line: the format and its version, whose memory it was, when, and how many item lines
    follow (so a file cut short is refused on import)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": iso(exported_at),
        "project": end_user.project.slug,
        "end_user": end_user.external_id,
        "items": items,
    }


def item_line(item: Item, versions: list[ItemVersion], facts: list[Fact]) -> dict:
    """One item as memory_add takes it, with its version number, whether its read was done (its facts are
    then complete), its earlier versions and its facts."""
    fields = {"id": item.external_id, "kind": item.kind, "text": item.text, "at": iso(item.at)}
    fields.update({name: getattr(item, name) for name in ("author", "role", "session", "title", "about")})
    if item.expires:
        fields["expires"] = iso(item.expires)
    fields["metadata"] = item.metadata
    return {
        "item": fields,
        "version": item.version,
        "read": item.is_read,
        "versions": [
            {"version": v.version, "text": v.text, "replaced_at": iso(v.replaced_at), "fields": v.fields}
            for v in versions
        ],
        "facts": [_fact(fact, item.external_id) for fact in facts],
    }


def _fact(fact: Fact, item_id: str) -> dict:
    out: dict[str, Any] = {
        "subject": fact.subject,
        "attribute": fact.attribute,
        "value": fact.value,
        "kind": fact.kind,
        "valid_from": iso(fact.valid_from),
        "stated_at": iso(fact.stated_at),
        "recorded_at": iso(fact.recorded_at),
    }
    for name in ("valid_to", "retracted_at"):
        if getattr(fact, name):
            out[name] = iso(getattr(fact, name))
    if fact.retraction:
        out["retraction"] = fact.retraction
    out["evidence"] = fact.evidence
    out["source"] = {"item": item_id}
    if fact.source_seq:
        out["source"]["passage"] = fact.source_seq
    return out


# ---- reading ----------------------------------------------------------------------------------------------


def _without(schema: dict, *names: str) -> dict:
    return {key: value for key, value in schema["properties"].items() if key not in names}


VERSION_SCHEMA = {
    "type": "object",
    "properties": {
        "version": {"type": "integer", "minimum": 1, "maximum": VERSION_MAX},
        "text": schema.text("The item's text as it was.", ITEM_TEXT_MAX, 0),
        "replaced_at": date_schema("When an edit replaced it."),
        # the item's other fields as they were: as memory_add takes them
        "fields": {
            "type": "object",
            "properties": _without(schema.ITEM_SCHEMA, "text", "id"),
            "additionalProperties": False,
        },
    },
    "required": ["version", "text", "replaced_at"],
    "additionalProperties": False,
}

FACT_SCHEMA = {
    "type": "object",
    "properties": {
        "subject": schema.line("Whom or what it is about.", ITEM_FIELD_MAX),
        "attribute": schema.line("Such as home_city.", ATTRIBUTE_MAX),
        "value": schema.line("The value; empty for an end.", ITEM_FIELD_MAX, 0),
        "kind": {"type": "string", "enum": ["value", Fact.END]},
        "valid_from": date_schema("True from."),
        "valid_to": date_schema("True until."),
        "stated_at": date_schema("When it was said."),
        "recorded_at": date_schema("When memory learned it."),
        "retracted_at": date_schema("When memory unlearned it."),
        "retraction": {"type": "string", "enum": list(RETRACTIONS)},
        "evidence": schema.text("The sentence it was read from.", ITEM_TEXT_MAX, 0),
        "source": {
            "type": "object",
            "properties": {
                "item": schema.line("The item it was read from: this line's.", ITEM_ID_MAX),
                "passage": {"type": "integer", "minimum": 1, "maximum": PASSAGE_PLACE_MAX},
            },
            "required": ["item"],
            "additionalProperties": False,
        },
    },
    "required": ["subject", "attribute", "kind", "valid_from", "stated_at", "recorded_at", "source"],
    "additionalProperties": False,
}

LINE_SCHEMA = {
    "type": "object",
    "properties": {
        "item": {"type": "object"},  # checked as memory_add checks an item (check_line)
        "version": {"type": "integer", "minimum": 1, "maximum": VERSION_MAX},
        "read": {"type": "boolean"},
        "versions": {"type": "array", "items": VERSION_SCHEMA},
        "facts": {"type": "array", "items": FACT_SCHEMA},
    },
    "required": ["item"],
    "additionalProperties": False,
}

# memory_add's schema, built once: validation compiles each schema object it meets, so a schema built anew
# for every line would be compiled anew for every line.
_ADD_SCHEMA = tools.BY_NAME["memory_add"].input_schema
_AS_ADDED = "items[0]"  # where memory_add's validation names the one item it is given


@dataclass
class ImportLine:
    """One checked item line: the item as memory_add takes it (dates parsed), and what comes with it."""

    number: int
    item: dict
    version: int = 1
    read: bool = False
    versions: list[dict] = field(default_factory=list)  # ItemVersion fields
    facts: list[dict] = field(default_factory=list)  # Fact fields, but the end user, item and subject key

    @property
    def id(self) -> str:
        return self.item["id"]


def _refused(number: int, refusal: InvalidArguments, prefix: str = "") -> InvalidImport:
    """validate()'s refusal as the import's: by line, with the field named as the line names it."""
    name = refusal.details["field"]
    message = refusal.message
    if prefix:
        name, message = prefix + name.removeprefix(_AS_ADDED), prefix + message.removeprefix(_AS_ADDED)
    return InvalidImport(number, name, message, refusal.details.get("bound"))


def check_header(data, number: int = 1) -> dict:
    """The first line, checked: this format, a version this server reads, and an item count if given."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InvalidImport(number, "format", f"format: the first line names the format, {FORMAT!r}")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= VERSION:
        raise InvalidImport(
            number, "version", f"version: this server reads versions 1 to {VERSION} of the format", bound=VERSION
        )
    items = data.get("items")
    if items is not None and (not isinstance(items, int) or isinstance(items, bool) or items < 0):
        raise InvalidImport(number, "items", "items: the number of item lines, a whole number")
    return data


def check_line(data, number: int) -> ImportLine:
    """An item line, checked: the item as memory_add checks it (and with its id, which keeps it the same
    item on every import), then its version number, versions and facts."""
    if not isinstance(data, dict):
        raise InvalidImport(number, "line", "an item line is a JSON object")
    try:
        parsed = validate(LINE_SCHEMA, data)
    except InvalidArguments as refusal:
        raise _refused(number, refusal) from None
    try:
        item = validate(_ADD_SCHEMA, {"items": [data["item"]]})["items"][0]
    except InvalidArguments as refusal:
        raise _refused(number, refusal, prefix="item") from None
    if "id" not in item:
        raise InvalidImport(number, "item.id", "item.id: required: an export names every item by its id")
    line = ImportLine(number, item, parsed.get("version", 1), parsed.get("read", False))
    numbers = set()
    for i, version in enumerate(parsed.get("versions", [])):
        if not version["version"] < line.version or version["version"] in numbers:
            raise InvalidImport(
                number,
                f"versions[{i}].version",
                f"versions[{i}].version: an earlier version: below the line's version, and named once",
            )
        numbers.add(version["version"])
        # the fields as the file gives them: stored as JSON, as the item's snapshot was
        line.versions.append({**version, "fields": data["versions"][i].get("fields", {})})
    for i, fact in enumerate(parsed.get("facts", [])):
        if fact["source"]["item"] != line.id:
            raise InvalidImport(number, f"facts[{i}].source.item", f"facts[{i}].source.item: the line's own item id")
        line.facts.append(_fact_fields(fact))
    return line


def _fact_fields(fact: dict) -> dict:
    fields = {
        name: fact.get(name)
        for name in (
            "subject",
            "attribute",
            "kind",
            "valid_from",
            "valid_to",
            "stated_at",
            "recorded_at",
            "retracted_at",
        )
    }
    fields.update(
        value=fact.get("value", ""),
        retraction=fact.get("retraction", ""),
        evidence=fact.get("evidence", ""),
        source_seq=fact["source"].get("passage"),
    )
    return fields
