"""A big memory's own search indexes: built by the beat's task, taken by the planner, search answers the
same, an interrupted build redone, and dropped when the end user is erased or the memory shrinks."""

import numpy as np
import pytest
from django.db import IntegrityError, connection, connections

from accounts.models import EndUser
from memory import tasks
from memory.query import retrieval
from memory.selectors import Memory, PassageFilters
from tests import plans
from twin.database import DEFAULT, OWNER

# The beat builds and drops as the tables' owner; the tests grow a memory as it, too (ANALYZE is the owner's).
pytestmark = pytest.mark.django_db(transaction=True, databases=[DEFAULT, OWNER])

QUESTION = "Where did Ines move to?"
TOPICS = ["the garden", "a new recipe", "the football", "work deadlines", "the weather", "a film", "the budget"]


@pytest.fixture
def big(api, settings):
    """Alice's memory, over the (lowered) size at which a memory gets its own indexes."""
    settings.OWN_INDEX_PASSAGES = 30
    api.add(
        *[
            {
                "text": f"Day {i}: walked the dog along the canal and talked about {TOPICS[i % len(TOPICS)]}.",
                "id": f"d{i}",
                "kind": "message",
                "session": f"s{i // 10}",
                "author": "Alice",
                "at": f"2026-01-{1 + i // 10:02d}T09:{i % 60:02d}:00",
            }
            for i in range(35)
        ]
    )
    api.add(
        {
            "text": "My sister Ines moved to Porto in March for her new job.",
            "id": "ines",
            "kind": "message",
            "session": "s9",
            "author": "Alice",
            "at": "2026-03-02T10:00:00",
        }
    )
    return EndUser.objects.get(external_id="u_1")


def own_indexes_of(end_user) -> dict[str, tuple[bool, str]]:
    """name -> (valid, definition) of the end user's own indexes."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.relname, i.indisvalid, pg_get_indexdef(c.oid) FROM pg_class c
            JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname LIKE %s
        """,
            [f"passage\\_%\\_u{end_user.pk}"],
        )
        return {name: (valid, definition) for name, valid, definition in cursor.fetchall()}


def grow(end_user, copies: int, into: list[int] | None = None, only: str = "item_ids <> '{ines}'"):
    """Copy the end user's passages (`only` those, by default the everyday ones) in SQL, `copies` times into
    each end user of `into` (by default, the end user's own): a memory big enough for the planner to weigh
    indexes. Each copy keeps its thread, further on in it."""
    with connections[OWNER].cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO memory_passage (end_user_id, thread_id, item_id, seq, path, kind, at, author, role, title,
                about, text, item_ids, embedding, context_embedding, model)
            SELECT u, thread_id, item_id, seq + 1000 * (g + %(copies)s * (n - 1)), path || '-' || n || '-' || g,
                kind, at, author, role, title, about, text, item_ids, embedding, context_embedding, model
            FROM memory_passage, unnest(%(into)s::bigint[]) WITH ORDINALITY AS target(u, n),
                generate_series(1, %(copies)s) AS g
            WHERE end_user_id = %(end_user)s AND {only}
        """,
            {"copies": copies, "into": into or [end_user.pk], "end_user": end_user.pk},
        )
        cursor.execute("ANALYZE memory_passage")


def test_a_big_memory_gets_its_own_indexes_and_search_takes_them(api, big, charlie_api):
    charlie_api.add({"text": "Charlie walked his dog and talked about the weather."})
    grow(big, copies=100)  # 3,500 passages
    grow(EndUser.objects.get(project__name="Charlie Co"), copies=5_000)  # everyone else's, in the shared indexes
    before = api.tool("search", query=QUESTION).json()["hits"]
    assert before[0]["item_ids"] == ["ines"]

    assert tasks.tend_own_indexes() == 1  # Alice's memory only: Charlie's is small
    built = own_indexes_of(big)
    assert set(built) == {f"passage_embedding_u{big.pk}", f"passage_fulltext_u{big.pk}"}
    assert all(valid for valid, _ in built.values())
    assert f"WHERE (end_user_id = {big.pk})" in built[f"passage_embedding_u{big.pk}"][1]
    assert tasks.tend_own_indexes() == 0  # nothing left to build

    # The planner takes them for search's own queries, and the answer is the same.
    with Memory(big).scoped():
        plans = retrieval.explain(Memory(big), QUESTION, PassageFilters())
    assert f"passage_embedding_u{big.pk}" in plans["vector"], plans["vector"]
    assert f"passage_fulltext_u{big.pk}" in plans["text"], plans["text"]
    after = api.tool("search", query=QUESTION).json()["hits"]
    assert after[0]["passage_id"] == before[0]["passage_id"]


def test_a_memory_without_indexes_of_its_own_finds_its_nearest_passages_exactly(api, big):
    # Most of the table, so a vector index over everyone's passages would be the planner's choice; its graph
    # walk misses some of the nearest among thousands of unlike vectors, where reading the memory whole does not.
    grow(big, copies=80)  # 2,800 passages
    with connections[OWNER].cursor() as cursor:
        cursor.execute(
            """
            UPDATE memory_passage p SET embedding = (
                SELECT l2_normalize(array_agg(random() - 0.5)::vector)::halfvec FROM generate_series(1, 384)
                WHERE p.id IS NOT NULL)
            WHERE end_user_id = %s
        """,
            [big.pk],
        )
        cursor.execute("ANALYZE memory_passage")
        cursor.execute("SELECT id, embedding::vector::real[] FROM memory_passage WHERE end_user_id = %s", [big.pk])
        ids, stored = zip(*cursor.fetchall(), strict=True)
    vectors = np.array(stored, dtype=np.float64)
    question = vectors[0] + np.random.default_rng(1).normal(0, 0.05, vectors.shape[1])
    question = (question / np.linalg.norm(question)).astype(np.float16)  # as search sends it
    cosines = vectors @ question / np.linalg.norm(vectors, axis=1)  # the question's own length ranks nothing
    nearest = {ids[i] for i in np.argsort(-cosines)[: retrieval.CANDIDATES]}

    memory = Memory(big)
    with memory.scoped():
        found = {
            row["id"] for row in memory.candidate_features([], question, [], PassageFilters(), retrieval.CANDIDATES)
        }
    assert not nearest - found, f"{len(nearest - found)} of the {len(nearest)} nearest passages missed"


def test_search_takes_them_though_the_statistics_predate_the_memory(api, big, charlie_api):
    # Statistics taken before Alice's memory grew (autovacuum analyzes a table only after a tenth of it
    # changed): to the planner her memory looks as small as everyone else's, so it would scan all of it for
    # the nearest passages rather than take the index built for it.
    charlie_api.add({"text": "Charlie walked his dog and talked about the weather."})
    charlie = EndUser.objects.get(project__name="Charlie Co")
    grow(big, copies=100)
    grow(charlie, copies=5_000)
    # As taken when Charlie's passages were nearly all the table held.
    before_alice = plans.attribute(
        "memory_passage",
        "end_user_id",
        null_frac="0::real",
        n_distinct="2::real",
        most_common_vals=f"'{{{charlie.pk}}}'::text",
        most_common_freqs="'{0.99}'::real[]",
    )
    with plans.statistics(before_alice, tables=("memory_passage",)):
        assert estimated_passages(big) < 100, "the statistics should not know Alice's memory"
        tasks.tend_own_indexes()
        assert estimated_passages(big) > 1_000
        with Memory(big).scoped():
            found = retrieval.explain(Memory(big), QUESTION, PassageFilters())
        assert f"passage_embedding_u{big.pk}" in found["vector"], found["vector"]


def estimated_passages(end_user) -> float:
    """How many passages the planner expects the end user's memory to hold."""
    with connections[OWNER].cursor() as cursor:
        return plans.explain(cursor, "SELECT id FROM memory_passage WHERE end_user_id = %s", [end_user.pk])["Plan Rows"]


def test_an_interrupted_build_is_done_again(api, big):
    # A failed CREATE INDEX CONCURRENTLY leaves an invalid index under the name.
    with connections[OWNER].cursor() as cursor, pytest.raises(IntegrityError):
        cursor.execute(
            f"CREATE UNIQUE INDEX CONCURRENTLY passage_fulltext_u{big.pk} ON memory_passage "
            f"(end_user_id) WHERE end_user_id = {big.pk}"
        )
    assert own_indexes_of(big)[f"passage_fulltext_u{big.pk}"][0] is False

    tasks.tend_own_indexes()
    valid, definition = own_indexes_of(big)[f"passage_fulltext_u{big.pk}"]
    assert valid and "USING gin (search)" in definition


def test_an_erased_memory_loses_its_own_indexes(api, big):
    tasks.tend_own_indexes()
    assert len(own_indexes_of(big)) == 2
    assert api.tool("forget", all=True).status_code == 200
    tasks.tend_own_indexes()
    assert own_indexes_of(big) == {}


def test_a_memory_that_shrinks_to_half_the_size_loses_them(api, big):
    tasks.tend_own_indexes()
    assert len(own_indexes_of(big)) == 2
    # 26 passages: under the size (30), over half of it
    assert api.tool("forget", ids=[f"d{i}" for i in range(10)]).status_code == 200
    tasks.tend_own_indexes()
    assert len(own_indexes_of(big)) == 2, "a memory hovering around the size keeps them"
    assert api.tool("forget", ids=[f"d{i}" for i in range(10, 25)]).status_code == 200  # 11 passages
    tasks.tend_own_indexes()
    assert own_indexes_of(big) == {}
    assert api.tool("search", query=QUESTION).json()["hits"][0]["item_ids"] == ["ines"]


def test_the_planner_knows_the_size_of_each_of_many_big_memories(big):
    # The planner picks a memory's own HNSW index over reading all its passages only when it expects many of
    # them. It knows a memory's size only while the memory is in the statistics' list of most common end
    # users; the rest share the average of what is left. At the default length of that list (100), the 101st
    # big memory looked as small as everyone else's.
    project = big.project
    many = EndUser.objects.bulk_create(EndUser(project=project, external_id=f"big_{n}") for n in range(150))
    few = EndUser.objects.bulk_create(EndUser(project=project, external_id=f"small_{n}") for n in range(300))
    # one passage each, from two threads apart, so that the copies' places in them never meet
    grow(big, copies=60, into=[end_user.pk for end_user in many], only="item_ids = '{d0}'")
    grow(big, copies=2, into=[end_user.pk for end_user in few], only="item_ids = '{ines}'")
    expected = [estimated_passages(end_user) for end_user in many]
    assert min(expected) >= 40, f"{sum(e < 40 for e in expected)} of the 150 big memories look small"
