"""Keeping the full-text statistics BM25 needs (document frequencies, passage count, average length) as
passages are written and erased, in the same transaction, so search reads them in one lookup."""

from django.db import connection

_ADD = """
WITH doc AS (SELECT id, search FROM memory_passage WHERE id = ANY(%(ids)s)),
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


def _apply(end_user_id: int, passage_ids: list[int], sign: int) -> None:
    if passage_ids:
        with connection.cursor() as cursor:
            cursor.execute(_ADD, {"ids": list(passage_ids), "end_user": end_user_id, "sign": sign})


def count_passages(end_user_id: int, passage_ids: list[int]) -> None:
    """Count passages just written into their end user's statistics."""
    _apply(end_user_id, passage_ids, 1)


def uncount_passages(end_user_id: int, passage_ids: list[int]) -> None:
    """Take passages about to be erased out of the statistics (call before deleting them)."""
    _apply(end_user_id, passage_ids, -1)


def lookup(end_user_id: int, terms: list[str]) -> tuple[int, float, dict[str, int]]:
    """(passages, average lexemes per passage, df of each term) for one end user."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT passages, lexemes FROM memory_memorystats WHERE end_user_id = %s", [end_user_id])
        row = cursor.fetchone() or (0, 0)
        cursor.execute("SELECT term, df FROM memory_termstat WHERE end_user_id = %s AND term = ANY(%s)",
                       [end_user_id, terms])
        df = dict(cursor.fetchall())
    passages, lexemes = row
    return passages, (lexemes / passages if passages else 1.0), df
