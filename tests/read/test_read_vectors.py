"""What the read embeds: each passage once; a turn's context mixed from its and the turn before's vectors;
a vector per sentence only for a long passage; and, on an edit, the vectors of what the edit left as it was."""

import numpy as np
import pytest
from django.db import connection

from memory.model import embeddings
from memory.models import SENTENCES_FROM_CHARS, Passage, PassageSentence
from memory.query import retrieval, search
from memory.query.features import FEATURES
from memory.read.cutting import MAX_CHARS
from memory.read.pieces import context_vector, sentences
from memory.selectors import Memory, scoped

# halfvec keeps about three significant digits: vectors equal up to storage have a cosine over this
SAME = 0.999

PARAGRAPHS = [
    (sentence * 8).strip()
    for sentence in (
        "The greenhouse on the north field was rebuilt in March after the storm took its roof. ",
        "Tomatoes go in the east beds this year, peppers in the west, and the herbs stay by the door. ",
        "The irrigation timer runs at six in the morning and again at eight in the evening in summer. ",
    )
]


def stored(project, external_id: str) -> list[Passage]:
    with scoped(project.pk):
        return list(Passage.objects.filter(item__external_id=external_id).order_by("seq"))


def vector(value) -> np.ndarray:
    return np.asarray(value, np.float32)


def cosine(a, b) -> float:
    a, b = vector(a), vector(b)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def sentence_vectors(project, passage: Passage) -> list[np.ndarray]:
    with scoped(project.pk):
        return [vector(s.embedding) for s in PassageSentence.objects.filter(passage=passage).order_by("pk")]


def test_a_reply_is_read_with_the_turn_before_it_in_this_read_and_across_reads(api, project):
    first = "Caroline: Did you go to the pottery class on Tuesday?"
    reply = "Melanie: Yes, and I made a bowl for my mother!"
    later = "Caroline: That is lovely, she will use it every day."
    api.add(
        {"text": first, "id": "t1", "kind": "message", "session": "s", "author": "Caroline"},
        {"text": reply, "id": "t2", "kind": "message", "session": "s", "author": "Melanie"},
        wait=True,
    )
    api.add({"text": later, "id": "t3", "kind": "message", "session": "s", "author": "Caroline"}, wait=True)
    (p1,), (p2,), (p3,) = stored(project, "t1"), stored(project, "t2"), stored(project, "t3")
    assert cosine(p1.context_embedding, p1.embedding) > SAME  # the first turn has none before it
    for before, own, text in ((p1, p2, reply), (p2, p3, later)):
        mixed = context_vector((len(before.text), vector(before.embedding)), len(text), vector(own.embedding))
        assert cosine(own.context_embedding, mixed) > SAME
        assert cosine(own.context_embedding, own.embedding) < 0.99  # the turn before it counts
    # embedded alone, the reply is far from the class it answers about; its context is near it
    question = embeddings.embed(["Did Melanie go to the pottery class?"])[0]
    assert cosine(question, p2.context_embedding) > cosine(question, p2.embedding)


def test_a_turn_gets_no_sentence_vectors_and_a_long_passage_one_per_sentence(api, project):
    turn = "Melanie: We went camping. The kids loved the lake! Then it rained all night."
    assert len(turn) < SENTENCES_FROM_CHARS and len(sentences(turn, "Melanie")) == 0
    document = PARAGRAPHS[0]
    api.add(
        {"text": turn, "id": "turn", "kind": "message", "session": "s", "author": "Melanie"},
        {"text": document, "id": "doc", "kind": "document"},
        wait=True,
    )
    assert sentence_vectors(project, stored(project, "turn")[0]) == []
    (passage,) = stored(project, "doc")
    said = sentences(passage.text, "")
    assert len(said) == 8
    for alone, kept in zip(embeddings.embed(said), sentence_vectors(project, passage), strict=True):
        assert cosine(alone, kept) > SAME


def test_search_scores_a_long_passage_by_its_best_sentence_and_a_turn_by_itself(api, project):
    """The candidates' `maxsent`: for a long passage, the question's cosine to its nearest sentence; for a
    turn, which has no sentences, its own cosine."""
    turn = "Melanie: The spare key hangs behind the kitchen calendar."
    document = " ".join([PARAGRAPHS[0], "The spare key to the shed hangs behind the kitchen calendar.", PARAGRAPHS[1]])
    api.add(
        {"text": turn, "id": "turn", "kind": "message", "session": "s", "author": "Melanie"},
        {"text": document, "id": "doc", "kind": "document"},
        wait=True,
    )
    question = "Where is the spare key to the shed?"
    (long_passage,), (short,) = stored(project, "doc"), stored(project, "turn")
    memory = Memory.of_end_user(long_passage.end_user_id)
    assert memory is not None
    with memory.scoped():
        found = retrieval.candidates(memory, question, search.passage_filters(scope="passages/"))
    column = {name: i for i, name in enumerate(FEATURES)}
    row = {int(pid): found.features[i] for i, pid in enumerate(found.ids)}
    asked = embeddings.embed_one(question)
    nearest = max(cosine(asked, v) for v in sentence_vectors(project, long_passage))
    assert row[long_passage.pk][column["maxsent"]] == pytest.approx(nearest, abs=0.005)
    assert row[long_passage.pk][column["maxsent"]] > row[long_passage.pk][column["cos_t"]] + 0.05
    assert row[short.pk][column["maxsent"]] == row[short.pk][column["cos_t"]]


@pytest.mark.parametrize("title", ["", "Farm notes"])
def test_an_edit_keeps_the_vectors_of_the_passages_it_left_as_they_were(api, project, title, monkeypatch):
    embedded = []

    def counted(texts):  # the real model, its texts counted
        embedded.extend(texts)
        return real(texts)

    real = embeddings.embed
    monkeypatch.setattr(embeddings, "embed", counted)

    def add(text: str):
        embedded.clear()
        api.add({"text": text, "id": "farm", "kind": "document", "title": title}, wait=True)

    add("\n\n".join(PARAGRAPHS))
    before = stored(project, "farm")
    assert len(before) == 3
    kept_sentences = sentence_vectors(project, before[0])
    edited = PARAGRAPHS[1].replace("peppers", "aubergines")
    add("\n\n".join([PARAGRAPHS[0], edited, PARAGRAPHS[2]]))
    titled = f"{title}\n{edited}" if title else edited
    # the model read the changed passage and its sentences only, not the unchanged two
    assert embedded == [titled, *sentences(edited, "")]
    after = stored(project, "farm")
    assert [p.seq for p in after] == [p.seq for p in before]
    for old, new in ((before[0], after[0]), (before[2], after[2])):
        assert vector(new.embedding).tolist() == vector(old.embedding).tolist()
    assert [v.tolist() for v in sentence_vectors(project, after[0])] == [v.tolist() for v in kept_sentences]
    assert cosine(after[1].embedding, embeddings.embed([titled])[0]) > SAME
    assert cosine(after[1].embedding, before[1].embedding) < SAME
    # and search reads the edit
    hit = api.tool("search", query="aubergines in the west beds", scope="passages/").json()["hits"][0]
    assert "aubergines" in hit["text"]


def test_a_passage_keeps_its_vectors_in_its_row(api, project):
    """Search reads a candidate's vectors with its row; out of line, each is a second lookup (migration 0023).
    A passage as long as a document's is cut keeps them too: its text is what moves out, being the biggest."""
    turn = (
        "Melanie: We finally went camping at the lake last weekend. The kids swam every morning, we grilled "
        "fish at night, and it only rained once, so we are already planning the next trip for August."
    )
    document = " ".join(PARAGRAPHS)[:MAX_CHARS]
    api.add(
        {"text": turn, "id": "turn", "kind": "message", "session": "s", "author": "Melanie"},
        {"text": document, "id": "doc", "kind": "document"},
        wait=True,
    )
    with scoped(project.pk), connection.cursor() as cursor:
        cursor.execute("""
            SELECT i.external_id, pg_column_toast_chunk_id(p.embedding) IS NULL,
                pg_column_toast_chunk_id(p.context_embedding) IS NULL
            FROM memory_passage p JOIN memory_item i ON i.id = p.item_id
        """)
        inline = {name: (vector, context) for name, vector, context in cursor.fetchall()}
    assert inline == {"turn": (True, True), "doc": (True, True)}
