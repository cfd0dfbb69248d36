"""How search reads the dates a question names (memory/query/features.py): however they are written."""

import numpy as np
import pytest

from memory.query.features import date_features, named_dates


@pytest.mark.parametrize(
    "question, day",
    [
        ("What did Gina find on 1 February, 2023?", (2023, 2, 1)),
        ("What painting did she show on October 13, 2023?", (2023, 10, 13)),
        ("What happened on the 8th of Sept. 2022?", (2022, 9, 8)),
        ("Who called on Oct 3rd 2021?", (2021, 10, 3)),
        ("What was said on 2023-05-08?", (2023, 5, 8)),
        ("What did she do on May 8th?", (None, 5, 8)),
    ],
)
def test_a_named_day_is_read_however_it_is_written(question, day):
    days, months, _ = named_dates(question)
    assert days == {day}
    assert months == {day[1]}


def test_months_and_years_alone():
    assert named_dates("Where did Melanie go camping in June?") == (set(), {6}, set())
    assert named_dates("What did John do in March 2022?") == (set(), {3}, {2022})
    assert named_dates("How many times in 2023?") == (set(), set(), {2023})
    assert named_dates("What may Caroline do next?") == (set(), set(), set())  # the verb
    assert named_dates("What may Caroline do in May?") == (set(), {5}, set())
    assert named_dates("Who was at the meeting on 31 June 2023?")[0] == {(2023, 6, 31)}  # kept, never matches


def test_date_features_score_the_named_month_and_the_days_near_the_named_day():
    at = ["2023-05-08", "2023-05-09", "2023-05-30", "2022-05-08", "2023-06-01"]
    month_or_year, near = date_features("What did she do on 8 May 2023?", at)
    assert month_or_year.tolist() == [1, 1, 1, 0, 0]
    assert near[0] == 1.0 and near[3] < 1e-6 and near[4] < near[2] < near[1] < 1.0
    # Without its year, a named day is that day in any year.
    assert date_features("on May 8", at)[1][[0, 3]].tolist() == [1.0, 1.0]
    none = date_features("What does she like?", at)
    assert not none[0].any() and not none[1].any()
    assert date_features("on 31 June 2023", at)[1].tolist() == [0.0] * 5
    assert np.all(date_features("in 2022", at)[0] == [0, 0, 0, 1, 0])
