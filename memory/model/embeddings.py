"""The one seam to the embedding model for the web and the background read: texts in, unit vectors out.

A web process embeds a search's question with the model in its own process (encoder.py), on a thread so the
database can work meanwhile (`embed_soon`). A worker child of the background read sends its texts to the
model's own process instead (process.py), which runs them on several lanes: in the process that writes the
read, the lanes waited for the interpreter's lock while the writing thread held it.
"""

import json
import logging
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
from django.conf import settings

from twin import metrics

from . import encoder, int8_file
from .encoder import DIMENSIONS, MODEL_ID, embed_here

__all__ = ["DIMENSIONS", "MODEL_ID", "embed", "embed_one", "embed_soon", "use_lanes", "warm_up"]

log = logging.getLogger(__name__)

# Celery workers embed many texts a call (settings.READ_MODEL_THREADS): see use_lanes.
_lane_count = 1
_model_process: subprocess.Popen | None = None  # the model's own process, once started
_model_process_lock = threading.Lock()
# Questions embedded while the database works: two, so a second search need not wait for the first's.
_questions = ThreadPoolExecutor(max_workers=2, thread_name_prefix="embed")


def use_lanes(count: int) -> None:
    """Embed each call's texts on `count` threads at once (the background read), in the model's own process
    (process.py), started at the first call. Safe before a fork: nothing starts here."""
    global _lane_count
    _lane_count = count


def embed(texts: list[str]) -> np.ndarray:
    """Unit vectors for `texts`, shape (len(texts), 384), float32."""
    metrics.embedded_observed(len(texts))
    if _lane_count > 1 and texts:  # a worker child: every text to the model's process, so the child never loads it
        return _in_model_process(texts)
    return embed_here(texts)


def embed_one(text: str) -> np.ndarray:
    """The unit vector of `text`."""
    return embed([text])[0]


def embed_soon(text: str) -> "Future[np.ndarray]":
    """Start embedding `text` on a thread while the caller goes on (the model releases the interpreter's lock):
    a search's question embeds while the database finds its text matches."""
    return _questions.submit(embed_one, text)


def is_loaded() -> bool:
    """Whether this process can embed without loading the model first: loaded here, or (a worker whose
    texts go to the model's own process) that process started."""
    return _model_process is not None if _lane_count > 1 else encoder.model_loaded()


def warm_up() -> None:
    """Load the model and run it on a few texts, so that a process's first read or search does not wait for
    that (a first embedding takes twice as long as the next ones). A model that cannot load does not stop the
    process starting: the console and every route without a vector still serve, and the callers that need the
    model fail as they would have."""
    try:
        embed([" ".join(["warm"] * length) for length in range(1, 33)])
    except Exception:
        log.warning("The embedding model could not be readied at start", exc_info=True)


def _in_model_process(texts: list[str]) -> np.ndarray:
    """The texts' vectors from the model's own process: their JSON on a line to it, 384 float32 each back."""
    global _model_process
    with _model_process_lock:
        if _model_process is None or _model_process.poll() is not None:
            path = int8_file.path(settings.VAR_DIR / "models")  # made here, once, not in each process
            _model_process = subprocess.Popen(
                [sys.executable, "-m", "memory.model.process", str(path), str(_lane_count)],
                cwd=Path(__file__).resolve().parents[2],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        size = len(texts) * DIMENSIONS * 4
        assert _model_process.stdin is not None and _model_process.stdout is not None  # both piped above
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
