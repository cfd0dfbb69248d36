"""Keeping the full-text statistics BM25 needs (document frequencies, passage count, average length) as
passages are written and erased, in the same transaction, so search reads them in one lookup
(Memory.term_statistics)."""

from typing import Any

from django.db import connection

from ..selectors import Memory

_ADD = """
WITH doc AS (SELECT id, search FROM memory_passage WHERE id = ANY(%(ids)s) AND end_user_id = %(end_user)s),
terms AS (
    INSERT INTO memory_termstat (end_user_id, term, df)
    SELECT %(end_user)s, lexeme, count(*) * %(sign)s FROM doc, unnest(doc.search) GROUP BY lexeme
    ON CONFLICT (end_user_id, term) DO UPDATE SET df = memory_termstat.df + EXCLUDED.df
)
INSERT INTO memory_memorystats (end_user_id, passages, lexemes)
SELECT %(end_user)s, count(*) * %(sign)s, coalesce(sum(length(search)), 0) * %(sign)s FROM doc
ON CONFLICT (end_user_id) DO UPDATE SET passages = memory_memorystats.passages + EXCLUDED.passages,
    lexemes = memory_memorystats.lexemes + EXCLUDED.lexemes
"""
# A term no passage holds any more is deleted, not kept at zero: the statistics would otherwise keep every
# word memory ever read, forgotten ones included. Run after _ADD, while the passages still exist.
_DROP_UNHELD = """
DELETE FROM memory_termstat WHERE end_user_id = %(end_user)s AND df <= 0 AND term IN (
    SELECT lexeme FROM memory_passage, unnest(search) WHERE id = ANY(%(ids)s) AND end_user_id = %(end_user)s)
"""
COUNT, UNCOUNT = 1, -1  # the sign each passage's lexemes and terms are added with


def _apply(memory: Memory, passage_ids: list[int], sign: int) -> None:
    if passage_ids:
        params: dict[str, Any] = {"ids": list(passage_ids), "end_user": memory.end_user.pk, "sign": sign}
        with connection.cursor() as cursor:
            cursor.execute(_ADD, params)
            if sign == UNCOUNT:
                cursor.execute(_DROP_UNHELD, params)


def count_passages(memory: Memory, passage_ids: list[int]) -> None:
    """Count passages just written into the memory's statistics."""
    _apply(memory, passage_ids, COUNT)


def uncount_passages(memory: Memory, passage_ids: list[int]) -> None:
    """Take passages about to be erased out of the memory's statistics (call before deleting them)."""
    _apply(memory, passage_ids, UNCOUNT)
