"""What the read tools answer, as JSON Schema (memory/query/: search.py, browse.py, history.py; and
services.memory_versions): the registry gives each to its route's OpenAPI 200 response, so a client generated
from the schema knows every key an answer can carry. A key that is sometimes absent is left out of
`required`; one that is always sent but may be null is `nullable`."""

_COUNT = {"type": "integer", "minimum": 0}
_STRING = {"type": "string"}
_TIME = {"type": "string", "description": "An ISO 8601 time."}
_MAYBE_TIME = {**_TIME, "nullable": True}
_PASSAGE = {
    "type": "object",
    "title": "Passage",
    "description": "One passage: its address, date, who, its text, and the items it was cut from.",
    "properties": {
        "path": {"type": "string", "description": "Its file, such as passages/memory/notes/th_…/p_0001.md."},
        "passage_id": {"type": "string", "description": "Its address, such as th_8b5e5d4c8946d815/p_0001."},
        "at": _TIME,
        "author": _STRING,
        "role": _STRING,
        "title": _STRING,
        "expires": {**_TIME, "description": "When it stops being true."},
        "score": {"type": "number", "description": "A ranked hit's score: higher is better."},
        "match": {"type": "string", "description": "A grep hit: the match with the text either side of it."},
        "center": {"type": "boolean", "description": "memory_around: the passage asked about."},
        "text": _STRING,
        "item_ids": {"type": "array", "items": _STRING, "description": "The items it was cut from."},
    },
    "required": ["path", "passage_id", "at", "text", "item_ids"],
}
_PASSAGES = {"type": "array", "items": _PASSAGE}
_KNOWN_PROPERTIES = {
    "subject": _STRING,
    "attribute": _STRING,
    "value": _STRING,
    "since": _TIME,
    "until": {**_MAYBE_TIME, "description": "When it stops being true, if known."},
    "said_at": _TIME,
    "source": {"type": "string", "description": "The passage file it was said in (empty once forgotten)."},
    "passage_id": _STRING,
}
_KNOWN = {
    "type": "object",
    "title": "KnownFact",
    "description": "A dated fact as it stood: what is true of a subject, since when, and where it was said.",
    "properties": _KNOWN_PROPERTIES,
    "required": list(_KNOWN_PROPERTIES),
}
SEARCH_MODES = ("brief", "ranked")
SEARCH_ANSWER = {
    "type": "object",
    "properties": {
        "query": _STRING,
        "mode": {
            "type": "string",
            "enum": list(SEARCH_MODES),
            "description": "brief (what is known, then passages), or ranked (with after or scope).",
        },
        "as_of": {"type": "string", "description": "With before: the day asked as of, as it was sent."},
        "known": {"type": "array", "items": _KNOWN, "description": "A brief's dated facts, most relevant first."},
        "found": _COUNT,
        "hits": {**_PASSAGES, "description": "The passages found, best first, each with its score."},
        "answer": {
            "type": "object",
            "description": "A brief's written answer, when a model is configured: its text, the passage ids it "
            "cites, and the model that wrote it.",
            "properties": {"text": _STRING, "cites": {"type": "array", "items": _STRING}, "model": _STRING},
            "required": ["text", "cites", "model"],
        },
    },
    "required": ["query", "mode", "found", "hits"],
}
GREP_ANSWER = {
    "type": "object",
    "properties": {
        "pattern": _STRING,
        "found": _COUNT,
        "hits": {**_PASSAGES, "description": "Passages holding the phrase, newest first, each with its match."},
    },
    "required": ["pattern", "found", "hits"],
}
READ_ANSWER = {
    "type": "object",
    "description": "index.md, a subject's file (with subject) or a passage's file (with its address).",
    "properties": {
        "path": _STRING,
        "subject": _STRING,
        "passage_id": _STRING,
        "at": _TIME,
        "item_ids": {"type": "array", "items": _STRING},
        "text": {"type": "string", "description": "The file, as Markdown."},
    },
    "required": ["path", "text"],
}
LS_ANSWER = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": 'The directory listed, ending in / ("" the top).'},
        "children": {
            "type": "array",
            "items": {
                "type": "object",
                "title": "Entry",
                "description": "A file or a directory (ending in /): a thread's directory has its counts and "
                "dates, a passage file its date and the start of its text.",
                "properties": {
                    "name": _STRING,
                    "path": _STRING,
                    "subject": _STRING,
                    "passages": _COUNT,
                    "first_at": _TIME,
                    "last_at": _TIME,
                    "title": _STRING,
                    "at": _TIME,
                    "preview": _STRING,
                },
                "required": ["name", "path"],
            },
        },
    },
    "required": ["path", "children"],
}
AROUND_ANSWER = {
    "type": "object",
    "properties": {
        "passage_id": _STRING,
        "thread": {"type": "string", "description": "The thread's id, th_…."},
        "passages": {**_PASSAGES, "description": "In order; the one asked about has center: true."},
    },
    "required": ["passage_id", "thread", "passages"],
}
LATEST_ANSWER = {
    "type": "object",
    "properties": {"passages": {**_PASSAGES, "description": "Newest first."}},
    "required": ["passages"],
}
_COUNTS = {
    "items": _COUNT,
    "unread_items": {**_COUNT, "description": "Items the background read has still to read."},
    "failed_items": {**_COUNT, "description": "Items the background read gave up on."},
    "threads": _COUNT,
    "passages": _COUNT,
    "passages_by_kind": {"type": "object", "additionalProperties": _COUNT},
}
OVERVIEW_ANSWER = {
    "type": "object",
    "properties": {
        "end_user": _STRING,
        "counts": {"type": "object", "properties": _COUNTS, "required": list(_COUNTS)},
        "first_at": _MAYBE_TIME,
        "last_at": _MAYBE_TIME,
        "places": {"type": "array", "items": _STRING, "description": "What memory_latest's place takes."},
        "index": {"type": "string", "description": "The written index, index.md."},
    },
    "required": ["end_user", "counts", "first_at", "last_at", "places", "index"],
}
_CHAIN_PROPERTIES = {
    "attribute": _STRING,
    "value": _STRING,
    "valid_from": _TIME,
    "valid_to": {**_MAYBE_TIME, "description": "When it stopped being true; null while it is."},
    "stated_at": _TIME,
    "recorded_at": _TIME,
    "retracted_at": _MAYBE_TIME,
    "retraction": {"type": "string", "nullable": True, "description": "Why it was retracted: edited, corrected."},
    "current": {"type": "boolean"},
    "source": {
        "type": "object",
        "properties": {"path": _STRING, "passage_id": _STRING, "item_id": {"type": "string", "nullable": True}},
        "required": ["path", "passage_id", "item_id"],
    },
}
_CHAIN_ENTRY = {
    "type": "object",
    "title": "ChainEntry",
    "properties": _CHAIN_PROPERTIES,
    "required": list(_CHAIN_PROPERTIES),
}
HISTORY_ANSWER = {
    "type": "object",
    "properties": {
        "subject": {"type": "string", "description": "The subject as recorded."},
        "attribute": {"type": "string", "nullable": True},
        "chain": {"type": "array", "items": _CHAIN_ENTRY, "description": "Oldest first."},
    },
    "required": ["subject", "attribute", "chain"],
}
_ITEM_FIELDS = {
    "version": {"type": "integer", "minimum": 1},
    "text": _STRING,
    "kind": _STRING,
    "at": _TIME,
    "author": _STRING,
    "role": _STRING,
    "session": _STRING,
    "title": _STRING,
    "about": _STRING,
    "expires": _TIME,
    "metadata": {"type": "object"},
}
VERSIONS_ANSWER = {
    "type": "object",
    "properties": {
        "id": _STRING,
        "current": {
            "type": "object",
            "title": "ItemNow",
            "properties": {**_ITEM_FIELDS, "updated_at": _TIME},
            "required": ["version", "text", "updated_at"],
        },
        "versions": {
            "type": "array",
            "description": "Earlier versions, oldest first.",
            "items": {
                "type": "object",
                "title": "ItemVersion",
                "properties": {**_ITEM_FIELDS, "replaced_at": _TIME},
                "required": ["version", "text", "replaced_at"],
            },
        },
    },
    "required": ["id", "current", "versions"],
}
