"""Vectors written to PostgreSQL as halfvec text, fast: each half-precision value's shortest decimal, looked up.

pgvector's Django field writes a float at a time in Python, each with more digits than a half holds, and the
read writes two vectors a passage. A table of the shortest decimal that reads back as each of the 65,536
halfs turns a vector into text by lookup, with a third of the text; every finite half reads back to the same
bits, through PostgreSQL's float parse too (bench/README.md "Adding")."""

from functools import lru_cache

import numpy as np
from pgvector.django import HalfVectorField


@lru_cache(maxsize=1)
def _decimals() -> np.ndarray:
    halfs = np.arange(2**16, dtype=np.uint16).view(np.float16)
    return np.array([np.format_float_positional(h, unique=True, trim="-") for h in halfs], dtype=object)


def warm_up() -> None:
    """Build the table now: a worker builds it before its pool forks, so no slice waits for it."""
    _decimals()


def half_text(vector: np.ndarray) -> str:
    """`vector` rounded to half precision, as halfvec text: '[0.02974,-0.0516,...]'."""
    halfs = np.asarray(vector, np.float32).astype(np.float16).view(np.uint16)
    return "[" + ",".join(_decimals()[halfs].tolist()) + "]"  # a list joins twice as fast as an object array


class HalfVectors(HalfVectorField):
    """pgvector's halfvec field, writing a numpy vector through half_text; anything else as pgvector does."""

    def get_prep_value(self, value):
        if isinstance(value, np.ndarray):
            return half_text(value)
        return super().get_prep_value(value)
