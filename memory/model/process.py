"""The embedding model in a process of its own, for the background read (embeddings.use_lanes).

    python -m memory.model.process MODEL_FILE LANES

Reads a JSON list of texts a line from standard input and writes their vectors to standard output, 384
float32 each, in order. It ends when its input does: when the worker that started it is gone, however it
went.
"""

import json
import os
import sys
from pathlib import Path

from memory.model import encoder


def main() -> None:
    # The answers keep the real standard output; whatever a library prints goes to standard error instead.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    encoder.serve(Path(sys.argv[1]), int(sys.argv[2]))
    for line in sys.stdin.buffer:
        answers.write(encoder.embed_here(json.loads(line)).astype("<f4").tobytes())
        answers.flush()


if __name__ == "__main__":
    main()
