"""Vectors are written to PostgreSQL as halfvec text through a table of each half's shortest decimal
(memory/model/half_text.py): PostgreSQL must read every one of them back as the very same half."""

import numpy as np
import pytest
from django.db import connection

from memory.model.half_text import half_text
from memory.models import HalfVectors
from memory.selectors import named_rows

pytestmark = pytest.mark.django_db


def test_every_finite_half_reads_back_from_postgresql_as_the_same_bits():
    halfs = np.arange(2**16, dtype=np.uint16).view(np.float16)
    finite = halfs[np.isfinite(halfs)]
    with connection.cursor() as cursor:
        for start in range(0, len(finite), 16_000):  # halfvec holds at most 16,000 dimensions
            chunk = finite[start : start + 16_000]
            cursor.execute("SELECT (%s::halfvec)::text AS back", [half_text(chunk)])
            (row,) = named_rows(cursor)
            back = np.array(row["back"][1:-1].split(","), dtype=np.float32).astype(np.float16)
            assert np.array_equal(back.view(np.uint16), chunk.view(np.uint16))


def test_a_vector_is_written_rounded_to_half_precision_and_anything_else_as_pgvector_writes_it():
    vector = np.random.default_rng(7).standard_normal(384).astype(np.float32)
    vector /= np.linalg.norm(vector)
    field = HalfVectors(dimensions=384)
    written = field.get_prep_value(vector)
    assert np.array_equal(
        np.array(written[1:-1].split(","), dtype=np.float32).astype(np.float16), vector.astype(np.float16)
    )
    assert field.get_prep_value([0.5, -0.25]) == "[0.5,-0.25]"
    assert field.get_prep_value(None) is None
