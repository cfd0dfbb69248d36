"""The JSON Schema pieces the tool registry builds its input schemas from: a bounded text, a one-line
text, a bounded integer, and the item memory_add and the import take. Each bound comes from limits.py."""

from .limits import DEFAULT_KIND, ITEM_FIELD_MAX, ITEM_ID_MAX, ITEM_KINDS, ITEM_TEXT_MAX, TEXT_MAX
from .validation import ONE_LINE_PATTERN, date_schema

READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}
WRITES = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


def text(description: str, max_length: int = TEXT_MAX, min_length: int = 1) -> dict:
    return {"type": "string", "minLength": min_length, "maxLength": max_length, "description": description}


def line(description: str, max_length: int, min_length: int = 1) -> dict:
    """A one-line string: no line breaks or bidirectional controls (validation names the bound "one line")."""
    return {**text(description, max_length, min_length), "pattern": ONE_LINE_PATTERN}


def integer(description: str, low: int, high: int, default: int) -> dict:
    return {"type": "integer", "minimum": low, "maximum": high, "default": default, "description": description}


ITEM_SCHEMA = {
    "type": "object",
    "properties": {
        "text": text(
            "What was said or written. 1 to 100,000 characters; a document is cut into passages.", ITEM_TEXT_MAX
        ),
        "kind": {
            "type": "string",
            "enum": list(ITEM_KINDS),
            "default": DEFAULT_KIND,
            "description": "message, document or note. Default note.",
        },
        "id": line(
            "Your id for the item. Sending the same id again edits that item, keeping its earlier text "
            "as a version. Generated when absent.",
            ITEM_ID_MAX,
        ),
        "at": date_schema("When it was said or written: an ISO day or time. Default now."),
        "author": line("Who said or wrote it.", ITEM_FIELD_MAX, 0),
        "role": line("The author's role, such as user or assistant.", ITEM_FIELD_MAX, 0),
        "session": line(
            "The conversation or run it belongs to; items of one session share a thread.", ITEM_FIELD_MAX, 0
        ),
        "title": line("A title, such as a document's.", ITEM_FIELD_MAX, 0),
        "about": line("The subject it is about.", ITEM_FIELD_MAX, 0),
        "expires": date_schema("When it stops being true: an ISO day or time."),
        "metadata": {"type": "object", "description": "Free JSON, at most 16 KB."},
    },
    "required": ["text"],
    "additionalProperties": False,
}
