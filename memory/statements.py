"""The SQL the Memory handle runs (memory/selectors.py), written out where the ORM would cost more than
PostgreSQL takes to run it, or cannot say it: search's term statistics, its two candidate sources and its
features, the facts a brief leads with, and the threads' kept counts. Run only through a Memory, which scopes
each to its end user."""

import re

TERM_STATISTICS = """
SELECT q.term, coalesce(t.df, 0) AS df, coalesce(s.passages, 0) AS passages, coalesce(s.lexemes, 0) AS lexemes
FROM unnest(tsvector_to_array(to_tsvector('english', %(query)s))) AS q(term)
LEFT JOIN memory_termstat t ON t.end_user_id = %(end_user)s AND t.term = q.term
LEFT JOIN memory_memorystats s ON s.end_user_id = %(end_user)s
"""

FACTS_ABOUT = """
SELECT f.* FROM memory_fact f
WHERE f.end_user_id = %(end_user)s AND (
    string_to_array(f.subject_key, ' ') && %(named)s::text[]
    OR f.subject_key IN (SELECT s.subject_key FROM memory_fact s
                         WHERE s.end_user_id = %(end_user)s AND s.source_path = ANY(%(sources)s::text[])))
ORDER BY f.id
"""

BY_TEXT = """
SELECT p.id FROM memory_passage p WHERE {p} AND p.search @@ %(tsq)s::tsquery
ORDER BY ts_rank(p.search, %(tsq)s::tsquery) DESC LIMIT {n}
"""

BY_VECTOR = """
SELECT p.id FROM memory_passage p WHERE {p} ORDER BY p.embedding <=> %(q)s::halfvec LIMIT {n}
"""

# Every candidate (the text source's ids, the vector source's run here, and each one's neighbour either side
# in its thread) with what it is scored on, in one round trip; the question's vector is parsed twice, not five
# times (bench/README.md "Search latency").
FEATURES = """
WITH nearest AS ({nearest}), base AS (
    SELECT unnest(%(ids)s::bigint[]) AS id
    UNION
    SELECT id FROM nearest
), question AS (
    SELECT %(q)s::halfvec AS v
), candidates AS (
    SELECT id FROM base
    UNION
    -- OFFSET 0 keeps the neighbours a subquery of their own, so b's seq comes in as a parameter: in a join,
    -- `n.seq = b.seq - 1` is not LEAKPROOF (the minus can overflow) and row-level security would keep it
    -- out of the (thread, seq) index, walking a long thread whole for each candidate
    SELECT beside.id FROM base JOIN memory_passage b ON b.id = base.id
    CROSS JOIN LATERAL (
        SELECT n.id FROM memory_passage n
        WHERE n.thread_id = b.thread_id AND n.seq IN (b.seq - 1, b.seq + 1) AND {n_filter} OFFSET 0
    ) beside
)
-- the day as text: the date features parse it only for a question that names a date (psycopg would
-- otherwise parse a timestamp for each of ~200 candidates on every search)
SELECT p.id, p.thread_id, p.seq, to_char(p.at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
    lower(p.author) AS author, lower(p.about) AS about,
    length(p.text) AS characters, length(p.search) AS lexemes,
    1 - (p.embedding <=> q.v) AS cos_t,
    1 - (coalesce(p.context_embedding, p.embedding) <=> q.v) AS cos_prev,
    (SELECT 1 - (n.context_embedding <=> q.v) FROM memory_passage n
     WHERE n.thread_id = p.thread_id AND n.seq = p.seq + 1 AND {n_filter}) AS cos_next,
    -- sentences only where a passage can have them (octet_length: never under the characters, read off
    -- the header, so a short passage costs no lookup)
    CASE WHEN octet_length(p.text) >= %(sentences_from)s THEN
        (SELECT max(1 - (s.embedding <=> q.v)) FROM memory_passagesentence s WHERE s.passage_id = p.id)
    END AS maxsent,
    -- the question's terms in the passage with their positions (BM25's counts), as tsvector text: every
    -- lexeme weighed D, the question's A, the A's kept (C functions, far cheaper than unnesting each
    -- passage's lexemes into an aggregate)
    ts_filter(setweight(setweight(p.search, 'D'), 'A', %(terms)s::text[]), '{{a}}')::text AS tf_text
FROM memory_passage p CROSS JOIN question q
WHERE p.id IN (SELECT id FROM candidates)
"""

# What the best candidates show (Memory.hits), for them alone: carried in the features statement for all
# ~190 candidates, their text, times and threads' tids would cost more than this round trip (bench/README.md
# "Search latency").
HITS = """
SELECT p.id, p.thread_id, p.seq, p.item_id, p.path, p.kind, p.author, p.role, p.title, p.about, p.text,
    p.item_ids, p.at, p.expires,
    -- a subquery, not a join: joined, the planner hashes the end user's every thread
    (SELECT t.tid FROM memory_thread t WHERE t.id = p.thread_id) AS tid
FROM memory_passage p WHERE p.end_user_id = %(end_user)s AND p.id = ANY(%(ids)s::bigint[])
"""


# A thread's passages, counted from them: a thread the end user holds, a passage of it under row-level
# security like every read here; one that lost them all counts 0 and no moments.
RECOUNT_THREADS = """
UPDATE memory_thread t SET passage_count = s.n, first_at = s.first_at, last_at = s.last_at
FROM (SELECT h.id, count(p.id) AS n, min(p.at) AS first_at, max(p.at) AS last_at
      FROM memory_thread h LEFT JOIN memory_passage p ON p.thread_id = h.id
      WHERE h.end_user_id = %(end_user)s AND h.id = ANY(%(threads)s::bigint[]) GROUP BY h.id) s
WHERE t.id = s.id
"""


# A lexeme of tsvector text ('' for a quote, \\ for a backslash) and its positions, if any ("3A,7A").
_LEXEME = re.compile(r"'((?:[^']|'')*)'(?::([0-9A-D,]+))?")


def term_counts(tsvector_text: str | None) -> dict[str, int]:
    """{lexeme: how often it occurs} from tsvector text: its positions, which to_tsvector gives every lexeme."""
    return {
        lexeme.replace("''", "'").replace("\\\\", "\\"): positions.count(",") + 1 if positions else 1
        for lexeme, positions in _LEXEME.findall(tsvector_text or "")
    }


def tsquery(terms: list[str]) -> str:
    """An OR of already-normalised lexemes, as tsquery input (quoted, so nothing is parsed again)."""
    return " | ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms)
