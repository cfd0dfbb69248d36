"""The model's batches (memory/embeddings.py): texts of like length go together, and a text's vector does
not depend on the texts it was batched with."""

import numpy as np

from memory import embeddings

TEXTS = [
    "Hi!",
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "Melanie: [PAD] is how my son spells pad, and we laughed about it all evening.",  # the pad token, written
    "The greenhouse on the north field was rebuilt in March after the storm took its roof. " * 12,  # > 256 tokens
    "ok",
    "Melanie: We went camping at the lake, the kids loved it, and then it rained all night long.",
]


def test_a_texts_vector_is_the_same_whatever_it_is_batched_with():
    together = embeddings.embed(TEXTS)
    assert together.shape == (len(TEXTS), embeddings.DIMENSIONS)
    for text, vector in zip(TEXTS, together, strict=True):
        alone = embeddings.embed([text])[0]
        assert float(alone @ vector) > 0.99999, text[:40]
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    # the literal "[PAD]" is read as a token of the text, not as padding
    assert float(together[2] @ embeddings.embed([TEXTS[2].replace("[PAD] ", "")])[0]) < 0.9999
    assert embeddings.embed([]).shape == (0, embeddings.DIMENSIONS)


def test_batches_hold_like_lengths_within_the_token_budget():
    lengths = [3, 250, 40, 41, 7, 256, 39, 12, 12, 12] + [20] * 40
    batches = embeddings._batches(lengths)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths))), "each text once"
    for batch in batches:
        longest = max(lengths[i] for i in batch)
        assert len(batch) <= embeddings.BATCH
        assert len(batch) == 1 or longest * len(batch) <= embeddings.BATCH_TOKENS, "padded size in budget"
    # ascending: a batch's texts are no longer than the next batch's
    assert all(max(lengths[i] for i in a) <= min(lengths[i] for i in b) for a, b in zip(batches, batches[1:]))
    assert [[lengths[i] for i in b] for b in batches[-2:]] == [[250], [256]], "over half the budget: alone"
    assert [lengths[i] for i in batches[0]] == [3, 7, 12, 12, 12, 20, 20, 20], "as many as a batch holds"


def test_lanes_give_the_vectors_one_batch_at_a_time_gives():
    """The background read embeds its batches on several threads at once (use_lanes): the same vectors, each
    in its text's place."""
    texts = [f"{text} ({n})" for n in range(12) for text in TEXTS]
    assert len(texts) > 2 * embeddings.BATCH, "several batches"
    alone = embeddings.embed(texts)
    saved = embeddings._threads, embeddings._lanes
    embeddings.use_lanes(2)
    try:
        laned = embeddings.embed(texts)
    finally:
        embeddings._threads, embeddings._lanes = saved
        embeddings._model.cache_clear()
    assert np.allclose((alone * laned).sum(axis=1), 1.0, atol=1e-5)
