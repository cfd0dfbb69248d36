"""The read's passages written: a slice's in one INSERT of one array a column."""

from typing import cast

import numpy as np
from django.db import connection

from memory.model.half_text import half_text

from ..models import Passage
from ..selectors import named_rows

# One statement over arrays, not bulk_create: that writes a placeholder a value, thousands a slice, and
# compiling them weighs on the slice's writes (bench/README.md "Adding"). Rows come back in the order they
# were given (WITH ORDINALITY), as bulk_create's RETURNING does.
_INSERT_PASSAGES = """
INSERT INTO memory_passage (end_user_id, thread_id, item_id, seq, path, kind, at, expires, author, role, title,
                            about, text, item_ids, embedding, context_embedding, model)
SELECT u.end_user_id, u.thread_id, u.item_id, u.seq, u.path, u.kind, u.at, u.expires, u.author, u.role,
       u.title, u.about, u.text, ARRAY[u.item_external_id], u.embedding::halfvec, u.context_embedding::halfvec,
       u.model
FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::integer[], %s::text[], %s::text[], %s::timestamptz[],
            %s::timestamptz[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],
            %s::text[], %s::text[], %s::text[]) WITH ORDINALITY
    AS u(end_user_id, thread_id, item_id, seq, path, kind, at, expires, author, role, title, about, text,
         item_external_id, embedding, context_embedding, model, n)
ORDER BY u.n
RETURNING id
"""


def insert_passages(rows: list[Passage]) -> None:
    """Insert the read's passages (each of one item), setting each one's id."""
    columns = [
        [getattr(row, name) for row in rows]
        for name in (
            "end_user_id",
            "thread_id",
            "item_id",
            "seq",
            "path",
            "kind",
            "at",
            "expires",
            "author",
            "role",
            "title",
            "about",
            "text",
        )
    ]
    columns += [
        [row.item_ids[0] for row in rows],
        [half_text(cast(np.ndarray, row.embedding)) for row in rows],  # the read's passages all have vectors
        [half_text(cast(np.ndarray, row.context_embedding)) for row in rows],
        [row.model for row in rows],
    ]
    with connection.cursor() as cursor:
        cursor.execute(_INSERT_PASSAGES, columns)
        for row, found in zip(rows, named_rows(cursor), strict=True):
            row.pk = found["id"]
            row._state.adding, row._state.db = False, connection.alias
