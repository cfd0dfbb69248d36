"""Forget that leaves no trace: after a forget by id (of an edited item), by path and of everything, none of
the forgotten items' words is left in any text, varchar, JSON, tsvector or array column of any table (read as
the tables' owner, so row-level security hides nothing) nor in any Redis key or value of this run; what the
other items said stays, and forget says what it erased."""

import pytest

from memory.models import Thread
from memory.selectors import scoped
from tests.traces import in_database, in_redis
from twin.database import DEFAULT, OWNER

pytestmark = pytest.mark.django_db(transaction=True, databases=[DEFAULT, OWNER])

# Words only the forgotten items hold, as their text, edit, title, metadata, author (a fact's subject), id
# and session; each is its own stem, or the part of it full text keeps ("zintl" of Zintle).
FORGOTTEN = ["zorblat", "glimmerq", "plixnor", "wubbadoo", "quorra", "zintl", "vanish-zq", "sess-zq"]
KEPT = ["keeperton", "bob stone"]


def keeper(**fields) -> dict:
    return {
        "text": "I live in Keeperton.",
        "id": "keeper",
        "author": "Bob Stone",
        "kind": "message",
        "session": "shared",
        "at": "2025-01-02",
        **fields,
    }


def vanishing(**fields) -> dict:
    return {
        "text": "I live in Zorblatburg.",
        "id": "vanish-zq",
        "author": "Quorra Zintle",
        "kind": "message",
        "title": "Plixnor notes",
        "metadata": {"tag": "wubbadoo"},
        "at": "2025-01-01",
        **fields,
    }


def assert_no_trace() -> None:
    assert in_database(FORGOTTEN) == {}
    assert in_redis(FORGOTTEN) == {}
    assert set(in_database(KEPT)) == set(KEPT)  # the scan does find what stays


def test_forget_by_id_after_an_edit_leaves_no_trace(api, project):
    api.add(keeper(id="keeper-0", session="", kind="note"))
    assert api.tool("versions", id="vanish-zq").status_code == 404  # Usage keeps the error naming it
    # The forgotten item opens the shared thread (so titles it) and states a fact; then it is edited.
    api.add(vanishing(session="shared"), keeper())
    api.add(vanishing(session="shared", text="I live in Glimmerquax."))
    assert set(in_database(FORGOTTEN)) == set(FORGOTTEN) - {"sess-zq"}  # it was all there
    answer = api.tool("forget", ids=["vanish-zq"]).json()
    assert answer == {
        "forgotten": 1,
        "ids": ["vanish-zq"],
        "erased": {"items": 1, "versions": 1, "passages": 1, "facts": 2},
    }
    assert_no_trace()
    with scoped(project.pk):
        assert Thread.objects.get(key="session:shared").title == "shared"  # titled again by what remains
    assert api.tool("history", subject="Bob Stone").status_code == 200


def test_forget_by_path_leaves_no_trace(api):
    api.add(
        keeper(),
        vanishing(session="sess-zq"),
        vanishing(id="vanish-zq-2", session="sess-zq", text="Glimmerquax is where I work.", at="2025-01-03"),
    )
    path = api.tool("grep", pattern="Zorblatburg").json()["hits"][0]["path"]
    answer = api.tool("forget", path=path.rsplit("/", 1)[0] + "/").json()
    assert answer["ids"] == ["vanish-zq", "vanish-zq-2"]
    assert answer["erased"] == {"items": 2, "versions": 0, "passages": 2, "facts": 1}
    assert_no_trace()


def test_forget_all_leaves_no_trace(api):
    api.as_account("u_2").add(keeper())
    api.add(vanishing(session="sess-zq"), vanishing(id="vanish-zq-2", text="I live in Glimmerquax."))
    answer = api.tool("forget", all=True).json()
    assert answer == {
        "forgotten": 2,
        "end_user": "erased",
        "erased": {"items": 2, "versions": 0, "passages": 2, "facts": 2},
    }
    assert_no_trace()
