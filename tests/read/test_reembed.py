"""After a model change, the passages an earlier model embedded are embedded again (memory/read/reembed.py,
memory.tasks.reembed_stale): in every memory, each gets what the read gives it now, a batch's first passage
mixed with the passage before it as the read mixes it, and search finds them by the new vectors."""

import numpy as np

from memory import tasks
from memory.model import embeddings
from memory.models import Passage, PassageSentence
from memory.read import reembed
from memory.selectors import Memory, scoped

from .test_read_vectors import PARAGRAPHS, SAME, cosine

TURNS = [
    ("Caroline", "Did you go to the pottery class on Tuesday?"),
    ("Melanie", "Yes, and I made a bowl for my mother!"),
    ("Caroline", "That is lovely, she will use it every day."),
    ("Melanie", "We are going camping at the lake next weekend with the kids."),
    ("Caroline", "Take a tent that can stand the rain, it always rains there in June."),
]


def add_memory(api) -> None:
    api.add(
        *[
            {"text": f"{who}: {said}", "id": f"t{n}", "kind": "message", "session": "s", "author": who}
            for n, (who, said) in enumerate(TURNS)
        ],
        {"text": "\n\n".join(PARAGRAPHS), "id": "farm", "kind": "document", "title": "Farm notes"},
        wait=True,
    )


def vectors(project) -> dict[str, tuple]:
    """path -> (model, vector, context vector, sentence vectors) of each passage of the project."""
    with scoped(project.pk):
        return {
            p.path: (
                p.model,
                np.asarray(p.embedding, np.float32),
                np.asarray(p.context_embedding, np.float32),
                [np.asarray(s.embedding, np.float32) for s in p.sentences.order_by("pk")],
            )
            for p in Passage.objects.prefetch_related("sentences")
        }


def as_an_earlier_model_left_them(project) -> None:
    rng = np.random.default_rng(3)
    with scoped(project.pk):
        for passage in Passage.objects.all():
            passage.embedding, passage.context_embedding = rng.normal(size=(2, embeddings.DIMENSIONS))
            passage.model = "all-MiniLM-L6-v2-onnx-int8"
            passage.save(update_fields=["embedding", "context_embedding", "model"])
        for sentence in PassageSentence.objects.all():
            sentence.embedding = rng.normal(size=embeddings.DIMENSIONS)
            sentence.save(update_fields=["embedding"])


def assert_as_read(now: dict, read: dict) -> None:
    assert now.keys() == read.keys()
    for path, (model, own, context, said) in now.items():
        assert model == embeddings.MODEL_ID, path
        assert cosine(own, read[path][1]) > SAME and cosine(context, read[path][2]) > SAME, path
        assert len(said) == len(read[path][3]) and all(
            cosine(a, b) > SAME for a, b in zip(said, read[path][3], strict=True)
        )


def test_the_beat_embeds_every_memory_of_an_earlier_model_again(api, charlie_api, project, other_project):
    add_memory(api)
    add_memory(charlie_api)
    read = {p: vectors(p) for p in (project, other_project)}
    assert any(said for _, _, _, said in read[project].values()), "a long passage has sentence vectors"
    assert reembed.stale_end_users(10) == []
    for p in (project, other_project):
        as_an_earlier_model_left_them(p)
    assert len(reembed.stale_end_users(10)) == 2

    assert tasks.reembed_stale() == 2  # each memory's task runs here (eager)
    for p in (project, other_project):
        assert_as_read(vectors(p), read[p])
    assert reembed.stale_end_users(10) == []
    assert tasks.reembed_stale() == 0
    # found by the new vectors (no word of the question is in the turn; its question comes with it)
    hits = api.tool("search", query="Which ceramic piece was crafted as a gift for a parent?", scope="passages/")
    assert "Melanie: Yes, and I made a bowl for my mother!" in [hit["text"] for hit in hits.json()["hits"][:2]]


def test_a_batch_that_starts_inside_a_thread_mixes_its_first_passage_with_the_one_before(api, project):
    add_memory(api)
    read = vectors(project)
    as_an_earlier_model_left_them(project)
    memory = Memory.of_end_user(reembed.stale_end_users(1)[0])
    assert memory is not None
    assert [reembed.reembed(memory, limit=2) for _ in range(6)] == [2, 2, 2, 2, 0, 0]  # 5 turns, 3 paragraphs
    assert_as_read(vectors(project), read)
