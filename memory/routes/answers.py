"""What the writing tools answer, as JSON Schema: the registry gives each to its route's OpenAPI 200
response (memory/routes/api.py), and the import route takes IMPORT_ANSWER (memory/portability/api.py), so a client
generated from the schema knows every status an item can come back with. The statuses are defined here
once; services.py answers with them."""

# An item of memory_add: stored (added, edited, unchanged), or not stored: a duplicate (the item it repeats
# holds it: memory/duplicates.py) or refused (it holds a secret: memory/secrets/gate.py).
ADDED, EDITED, UNCHANGED, DUPLICATE, REFUSED = "added", "edited", "unchanged", "duplicate", "refused"
ITEM_STATUSES = (ADDED, EDITED, UNCHANGED, DUPLICATE, REFUSED)

_SECRET_PLACE = {
    "type": "object",
    "properties": {
        "field": {
            "type": "string",
            "description": "Where the secret was, such as items[3].text or "
            "items[0].metadata.api.token (a metadata key that is itself a secret reads <key>).",
        },
        "secret": {
            "type": "string",
            "description": "Its kind, such as AWS Access Key, Password or Payment "
            "card number. Never the secret itself.",
        },
    },
    "required": ["field", "secret"],
}

_REDACTED = {
    "type": "array",
    "items": _SECRET_PLACE,
    "description": "For a project that redacts secrets: the fields stored with a secret replaced by "
    "[redacted: <kind>].",
}

ADD_ANSWER = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "description": "One entry per item sent, in order.",
            "items": {
                "type": "object",
                "properties": {
                    "id": {
                        "type": "string",
                        "nullable": True,
                        "description": "The item's id: the one sent, the one "
                        "generated, or for a duplicate the id of the item it repeats. Null for a refused item "
                        "sent without an id (or whose id holds the secret).",
                    },
                    "status": {
                        "type": "string",
                        "enum": list(ITEM_STATUSES),
                        "description": (
                            "added, edited (its earlier text kept as a version) or unchanged; duplicate: sent without "
                            "an id, it repeats an item already stored (same kind, author and text, and for a message "
                            "the same session and time), so it was not stored again; refused: it holds a secret, so "
                            "nothing of it was stored (an edit leaves the item as it was)."
                        ),
                    },
                    "searchable": {
                        "type": "boolean",
                        "description": "Whether it can be found yet; false when refused.",
                    },
                    "duplicate_of": {
                        "type": "string",
                        "description": "For a duplicate: the id of the item it repeats.",
                    },
                    "field": {"type": "string", "description": "For a refused item: where the secret was."},
                    "secret": {"type": "string", "description": "For a refused item: the secret's kind."},
                    "redacted": _REDACTED,
                },
                "required": ["id", "status", "searchable"],
            },
        },
        "searchable": {"type": "boolean", "description": "Whether every stored item is searchable."},
        "message": {"type": "string", "description": "With wait: what was not searchable in time."},
    },
    "required": ["items", "searchable"],
}

CORRECT_ANSWER = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "status": {"type": "string", "enum": [EDITED, UNCHANGED]},
        "version": {"type": "integer"},
        "redacted": _REDACTED,
    },
    "required": ["id", "status", "version"],
    "description": "A text holding a secret is refused with 400 invalid_arguments naming the field and the "
    "secret's kind (`secret`), and the item stays as it was; a project that redacts stores it redacted.",
}

_COUNT = {"type": "integer", "minimum": 0}
FORGET_ANSWER = {
    "type": "object",
    "properties": {
        "forgotten": {"type": "integer", "description": "How many items were erased."},
        "ids": {"type": "array", "items": {"type": "string"}, "description": "Their ids (by ids or path)."},
        "end_user": {"type": "string", "enum": ["erased"], "description": "With all: the end user is gone."},
        "erased": {
            "type": "object",
            "description": "What was erased: the items, their earlier versions, their passages and the facts "
            "they were the source of.",
            "properties": {"items": _COUNT, "versions": _COUNT, "passages": _COUNT, "facts": _COUNT},
            "required": ["items", "versions", "passages", "facts"],
        },
    },
    "required": ["forgotten", "erased"],
}


_IN_FILE = {
    "type": "object",
    "properties": {
        "line": {"type": "integer", "minimum": 1, "description": "The item's line in the file, 1 the first."},
        "field": {
            "type": "string",
            "description": "Where the secret was within the line, such as item.text or item.metadata.api.token.",
        },
        "secret": {"type": "string", "description": "Its kind, such as AWS Access Key. Never the secret itself."},
    },
    "required": ["line", "field", "secret"],
}
IMPORT_STATUSES = (ADDED, EDITED, UNCHANGED, REFUSED)  # an imported item has an id: never a duplicate
IMPORT_ANSWER = {
    "type": "object",
    "properties": {
        "items": {**_COUNT, "description": "How many item lines the file holds."},
        "statuses": {
            "type": "object",
            "properties": {status: _COUNT for status in IMPORT_STATUSES},
            "description": "How many items came back with each status, as memory_add names them (only the "
            "statuses that occurred): added, edited or unchanged (the memory held that id), refused (it held "
            "a secret: nothing of it stored).",
        },
        "refused": {"type": "array", "items": _IN_FILE, "description": "Each item refused for a secret."},
        "redacted": {
            "type": "array",
            "items": _IN_FILE,
            "description": "For a project that redacts secrets: "
            "each field stored with a secret replaced by [redacted: <kind>].",
        },
        "versions": {**_COUNT, "description": "Earlier versions brought with the added items."},
        "facts": {**_COUNT, "description": "Facts brought with the added items, with their times."},
        "secrets_caught": {
            **_COUNT,
            "description": "Every secret the gate caught: items refused, fields "
            "redacted, and earlier versions and facts left out or redacted.",
        },
        "unread_items": {
            **_COUNT,
            "description": "Items the background read has still to read (as memory_overview counts them).",
        },
        "message": {"type": "string"},
    },
    "required": [
        "items",
        "statuses",
        "refused",
        "redacted",
        "versions",
        "facts",
        "secrets_caught",
        "unread_items",
        "message",
    ],
}

# What an import's refusal adds to the error's shape: every bad line found, not only the first.
IMPORT_REFUSED_LINES = {
    "type": "array",
    "description": "A file refused for its lines: each bad line by its number, its field, the message and the "
    "bound (the first 100; the first is also named at the top).",
    "items": {
        "type": "object",
        "properties": {
            "line": {"type": "integer", "minimum": 1},
            "field": {"type": "string"},
            "message": {"type": "string"},
            "bound": {"description": "The bound that was passed, when there is one."},
        },
        "required": ["line", "field", "message"],
    },
}
IMPORT_JOB_STATES = ("queued", "checking", "storing", "done", "refused", "failed")
IMPORT_JOB = {
    "type": "object",
    "properties": {
        "job": {"type": "string", "description": "The job's id."},
        "state": {
            "type": "string",
            "enum": list(IMPORT_JOB_STATES),
            "description": "queued (waiting for the import's worker), checking (the first pass: every line), "
            "storing (the second), then done, refused (by the first pass: nothing stored) or failed (on the "
            "server's side: what it had stored was undone).",
        },
        "url": {"type": "string", "description": "Where to ask for its state: GET /v1/memory/import/<job>."},
        "items": {**_COUNT, "nullable": True, "description": "The file's item lines, once all are checked."},
        "checked": {**_COUNT, "description": "Lines checked so far."},
        "stored": {**_COUNT, "description": "Item lines stored so far."},
        "created_at": {"type": "string"},
        "finished_at": {"type": "string", "nullable": True},
        "answer": {**IMPORT_ANSWER, "description": "Once done: the import's answer."},
        "error": {
            "type": "object",
            "description": "Once refused or failed: the error the import answered, with `lines` for a file "
            "refused for its lines.",
        },
        "message": {"type": "string"},
    },
    "required": ["job", "state", "url", "items", "checked", "stored", "created_at", "finished_at"],
}
