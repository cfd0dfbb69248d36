"""A big memory's own indexes: for an end user with at least settings.OWN_INDEX_PASSAGES passages, a
partial HNSW index and a partial full-text index on memory_passage that hold only their passages.

A smaller memory is searched by reading all of it through the end user's index: its nearest passages exactly,
with no vector index over everyone's passages for every write to pay for (migration 0022). Read whole, a big
memory makes every search slow, and the full-text index, shared by everyone's passages, makes the text source
intersect its matches with all of the end user's entries in the end_user index. With indexes of its own, it is
searched as if it were alone (bench/README.md "Search latency"). Nothing else changes: search's queries say
`end_user_id = <n>`, which implies the indexes' predicate, so the planner takes them by itself, once its
statistics know the memory is big (a build takes them again; they keep the size of 500 memories: migration
0021). Every index is one more relation for the planner to weigh on every search of the table, whoever's
memory it is, so only big memories get them, and a table with hundreds of them would want partitions instead.

The beat's tend_own_indexes builds them (concurrently: search and writes go on) and drops those whose end
user is gone, whichever way they went (erased, or their project deleted), or whose memory has shrunk. It
learns the memories' sizes across end users from the one function that may look there
(memory/migrations/0008), and builds and drops as twin_owner (the OWNER alias): only a table's owner may.
"""

from django.conf import settings
from django.db import connection, connections

from twin.database import OWNER

from ..limits import HNSW_BUILD_CANDIDATES, HNSW_LINKS
from ..project_selectors import end_users_with_passages
from ..selectors import Memory, named_rows

_METHODS = {
    "passage_embedding_u{id}": "USING hnsw (embedding halfvec_cosine_ops) "
    f"WITH (m = {HNSW_LINKS}, ef_construction = {HNSW_BUILD_CANDIDATES})",
    "passage_fulltext_u{id}": "USING gin (search)",
}
_OWN = r"^passage_(embedding|fulltext)_u[0-9]+$"
# A memory keeps its indexes until it shrinks below this share of the size that earns them.
KEEP_SHARE = 2  # half: a memory hovering around the size is not rebuilt again and again


def existing() -> dict[str, bool]:
    """Name -> valid, of every own index there is (a catalog read: no end user's rows)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.relname AS name, i.indisvalid AS valid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
            WHERE i.indrelid = 'memory_passage'::regclass AND c.relname ~ %s
        """,
            [_OWN],
        )
        return {row["name"]: row["valid"] for row in named_rows(cursor)}


def wanted() -> list[int]:
    """End users big enough for their own indexes who lack a valid one."""
    big = end_users_with_passages(at_least=settings.OWN_INDEX_PASSAGES)
    have = existing()
    return [end_user for end_user in big if not all(have.get(name.format(id=end_user)) for name in _METHODS)]


def build(memory: Memory) -> list[str]:
    """Create the memory's own indexes that are missing; one left invalid by an interrupted build is
    dropped and built again; then the table's statistics are taken again. Returns the names built. Runs
    outside a transaction (CONCURRENTLY)."""
    end_user = int(memory.end_user.pk)
    have = existing()
    built = []
    with connections[OWNER].cursor() as cursor:
        for template, method in _METHODS.items():
            name = template.format(id=end_user)
            if have.get(name):
                continue
            if name in have:
                cursor.execute(f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"')
            cursor.execute(
                f'CREATE INDEX CONCURRENTLY "{name}" ON memory_passage {method} WHERE end_user_id = {end_user}'
            )
            built.append(name)
        if built:
            # The planner's statistics may predate the memory's growth (autovacuum analyzes a table after a
            # tenth of it changed): a memory imported since looks as small as any, and the planner would scan
            # all of it rather than take the index just built. An ANALYZE of a big table takes seconds
            # (migration 0021's sample), and runs once a big memory.
            cursor.execute("ANALYZE memory_passage")
    return built


def drop_unwanted() -> list[str]:
    """Drop the own indexes of end users who are gone, or whose memory has shrunk below half the size that
    earns them (half: a memory that hovers around that size is not rebuilt again and again). Returns the
    names dropped."""
    owner = {name: int(name.rsplit("_u", 1)[1]) for name in existing()}
    kept = set(end_users_with_passages(at_least=settings.OWN_INDEX_PASSAGES // KEEP_SHARE, among=set(owner.values())))
    unwanted = [name for name, end_user in owner.items() if end_user not in kept]
    with connections[OWNER].cursor() as cursor:
        for name in unwanted:
            cursor.execute(f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"')
    return unwanted
