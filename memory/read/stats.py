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


def for_query(end_user_id: int, query: str) -> tuple[list[str], int, float, dict[str, int]]:
    """In one round trip: the question's terms, normalised as the passages' full text is (English
    stemming, stop words out), and the end user's passage count, average lexemes per passage and the
    document frequency of each term."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT q.term, coalesce(t.df, 0), coalesce(s.passages, 0), coalesce(s.lexemes, 0)
               FROM unnest(tsvector_to_array(to_tsvector('english', %(query)s))) AS q(term)
               LEFT JOIN memory_termstat t ON t.end_user_id = %(end_user)s AND t.term = q.term
               LEFT JOIN memory_memorystats s ON s.end_user_id = %(end_user)s""",
            {"query": query, "end_user": end_user_id},
        )
        rows = cursor.fetchall()
    if not rows:
        return [], 0, 1.0, {}
    passages, lexemes = rows[0][2], rows[0][3]
    return [r[0] for r in rows], passages, (lexemes / passages if passages else 1.0), {r[0]: r[1] for r in rows}
