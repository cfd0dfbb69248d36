"""BM25's term counts come back from the features statement as tsvector text (memory/statements.py): what
`term_counts` reads from it must be what PostgreSQL's own unnest counts, for any lexeme, quotes and
backslashes included. (A passage's tsvector is to_tsvector's, so each lexeme has its positions.)"""

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import statements
from memory.selectors import named_rows

pytestmark = pytest.mark.django_db

# The features statement's expression (test_the_expression_is_the_features_statements holds them together),
# on a tsvector built here: the question's terms kept, with positions.
EXPRESSION = "ts_filter(setweight(setweight(p.search, 'D'), 'A', %(terms)s::text[]), '{a}')::text"
KEPT = f"""
WITH p AS (SELECT %(given)s::tsvector || to_tsvector('simple', %(words)s) AS search)
SELECT {EXPRESSION} AS tf_text,
    (SELECT coalesce(json_object_agg(u.lexeme, coalesce(array_length(u.positions, 1), 1)), '{{}}')
     FROM unnest(p.search) u WHERE u.lexeme = ANY(%(terms)s::text[])) AS counted
FROM p
"""

lexemes = st.text(st.sampled_from("ab'\\ é\"z:,"), min_size=1, max_size=6)
positions = st.lists(st.integers(1, 16383), min_size=1, max_size=4)
words = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta"]), max_size=12)


def tsvector_input(given: dict[str, list[int]]) -> str:
    """tsvector input text: each lexeme quoted ('' for a quote, \\\\ for a backslash), then its positions."""
    quoted = {"'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'": at for lexeme, at in given.items()}
    return " ".join(f"{lexeme}:{','.join(map(str, at))}" for lexeme, at in quoted.items())


def kept(given: dict[str, list[int]], words: list[str], terms: list[str]) -> tuple[dict, dict]:
    with connection.cursor() as cursor:
        cursor.execute(KEPT, {"given": tsvector_input(given), "words": " ".join(words), "terms": terms})
        (row,) = named_rows(cursor)
    return statements.term_counts(row["tf_text"]), row["counted"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    given=st.dictionaries(lexemes, positions, max_size=5),
    words=words,
    extra=st.lists(lexemes | st.sampled_from(["alpha", "beta", "omega"]), max_size=4),
)
def test_the_counts_read_from_tsvector_text_are_postgresqls_own(given, words, extra):
    terms = sorted(set(list(given)[:2] + words[:2] + extra))
    read, counted = kept(given, words, terms)
    assert read == counted


def test_a_repeated_word_counts_each_time_and_a_term_not_there_not_at_all():
    read, _ = kept(
        {"it's": [1, 9], "back\\slash": [2]},
        ["alpha", "beta", "alpha", "alpha"],
        ["alpha", "it's", "back\\slash", "zeta"],
    )
    assert read == {"alpha": 3, "it's": 2, "back\\slash": 1}
    assert kept({}, ["alpha"], [])[0] == {}


def test_the_expression_is_the_features_statements():
    assert f"{EXPRESSION} AS tf_text" in statements.FEATURES.format(nearest="", n_filter="")
