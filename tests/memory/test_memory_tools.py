"""The addressed tools and search over HTTP: answers, orderings, bounds and the 'could not answer' cases."""

import pytest

from memory.limits import AROUND_WIDTH_MAX, GREP_LIMIT_MAX, LATEST_K_MAX, NAME_MAX, TEXT_MAX


@pytest.fixture
def conversation(api):
    """A two-session conversation plus a document and a note."""
    turns = [
        ("s1", "2026-03-01T10:00:00", "Alice", "Alice: I adopted a cat called Miso."),
        ("s1", "2026-03-01T10:01:00", "Bob", "Bob: Lovely! What colour is Miso?"),
        ("s1", "2026-03-01T10:02:00", "Alice", "Alice: Ginger, and very loud."),
        ("s1", "2026-03-01T10:03:00", "Bob", "Bob: Ha. Mine is quiet."),
        ("s1", "2026-03-01T10:04:00", "Alice", "Alice: I am training for the Lisbon marathon."),
        ("s2", "2026-04-10T09:00:00", "Alice", "Alice: The marathon went well, 3 hours 50."),
    ]
    api.add(
        *[
            {"text": t, "kind": "message", "session": s, "at": at, "author": who, "id": f"m{i}"}
            for i, (s, at, who, t) in enumerate(turns, 1)
        ]
    )
    api.add(
        {
            "text": "Quarterly plan.\n\nShip the memory server.",
            "kind": "document",
            "title": "Q2 plan",
            "id": "doc1",
            "at": "2026-02-01",
        },
        {"text": "Alice prefers oat milk", "id": "note1", "at": "2026-01-15"},
    )
    return api


def passage_of(api, text):
    return api.tool("grep", pattern=text).json()["hits"][0]


def test_grep_finds_exact_text_ignoring_case_newest_first(conversation):
    body = conversation.tool("grep", pattern="MARATHON").json()
    assert body["pattern"] == "MARATHON" and body["found"] == 2
    assert [h["item_ids"] for h in body["hits"]] == [["m6"], ["m5"]]
    hit = body["hits"][0]
    assert set(hit) >= {"path", "passage_id", "at", "text", "item_ids"}
    assert hit["at"] == "2026-04-10T09:00:00+00:00"


def test_grep_takes_a_scope_and_a_limit(conversation):
    assert conversation.tool("grep", pattern="a", scope="passages/memory/documents/").json()["found"] == 1
    assert conversation.tool("grep", pattern="Alice", limit=2).json()["found"] == 2
    for bad in (0, GREP_LIMIT_MAX + 1):
        response = conversation.tool("grep", pattern="a", limit=bad)
        assert response.status_code == 400 and response.json()["field"] == "limit"
    assert conversation.tool("grep", pattern="a", limit=GREP_LIMIT_MAX).status_code == 200


def test_grep_treats_the_pattern_as_text_not_a_wildcard(conversation):
    assert conversation.tool("grep", pattern="%").json()["found"] == 0
    assert conversation.tool("grep", pattern="_").json()["found"] == 0


def test_read_renders_a_passage_file(conversation):
    hit = passage_of(conversation, "Miso.")
    body = conversation.tool("read", path=hit["path"]).json()
    assert body["path"] == hit["path"] and body["item_ids"] == ["m1"]
    text = body["text"]
    assert text.startswith(f"# {hit['passage_id']}")
    assert "- at: 2026-03-01T10:00:00+00:00" in text and "- author: Alice" in text and "- items: m1" in text
    # The body is stored data, so it is quoted: a fenced block after the header lines.
    assert text.endswith("\n\n```\nAlice: I adopted a cat called Miso.\n```\n")


def test_read_serves_the_written_index(conversation):
    body = conversation.tool("read", path="index.md").json()
    assert body["text"].startswith("# Memory of u_1")
    assert "8 items" in body["text"] and "Q2 plan" in body["text"]


def test_read_of_a_missing_path_answers_with_its_siblings(conversation):
    hit = passage_of(conversation, "Miso.")
    missing = hit["path"].replace("p_0001", "p_0099")
    response = conversation.tool("read", path=missing)
    assert response.status_code == 404
    body = response.json()
    assert body["error"] == "not_found"
    assert "p_0001.md" in body["siblings"] and len(body["siblings"]) == 5


def test_read_of_a_directory_says_so(conversation):
    response = conversation.tool("read", path="passages/memory/")
    assert response.status_code == 404 and response.json()["error"] == "is_a_directory"


def test_read_of_a_directory_that_does_not_exist_is_not_found(conversation):
    response = conversation.tool("read", path="passages/nowhere/")
    assert response.status_code == 404 and response.json()["error"] == "not_found"
    assert response.json()["directory"] == "passages/"


def test_ls_walks_the_tree(conversation):
    assert [c["name"] for c in conversation.tool("ls").json()["children"]] == ["index.md", "passages/", "subjects/"]
    assert [c["name"] for c in conversation.tool("ls", path="passages").json()["children"]] == ["memory/"]
    kinds = conversation.tool("ls", path="passages/memory/").json()["children"]
    assert [c["name"] for c in kinds] == ["documents/", "messages/", "notes/"]
    threads = conversation.tool("ls", path="passages/memory/messages/").json()["children"]
    assert len(threads) == 2 and all(c["name"].endswith("/") for c in threads)
    assert threads[0]["last_at"] > threads[1]["last_at"]
    files = conversation.tool("ls", path=threads[1]["path"]).json()["children"]
    assert [f["name"] for f in files] == [f"p_000{i}.md" for i in range(1, 6)]


def test_ls_of_a_missing_directory_answers_with_the_nearest(conversation):
    response = conversation.tool("ls", path="passages/memory/videos/")
    assert response.status_code == 404
    assert response.json()["nearest"] == "passages/memory/"
    assert response.json()["children"] == ["documents/", "messages/", "notes/"]


def test_around_reads_either_side_in_order(conversation):
    middle = passage_of(conversation, "Ginger")
    body = conversation.tool("around", passage_id=middle["passage_id"], width=1).json()
    assert [p["item_ids"][0] for p in body["passages"]] == ["m2", "m3", "m4"]
    assert body["passages"][1]["center"] is True
    default = conversation.tool("around", passage_id=middle["passage_id"]).json()
    assert [p["item_ids"][0] for p in default["passages"]] == ["m1", "m2", "m3", "m4", "m5"]


def test_around_stays_in_its_thread_and_checks_its_bounds(conversation):
    first = passage_of(conversation, "Miso.")
    body = conversation.tool("around", passage_id=first["passage_id"], width=AROUND_WIDTH_MAX).json()
    assert [p["item_ids"][0] for p in body["passages"]] == ["m1", "m2", "m3", "m4", "m5"]  # not s2's m6
    for bad in (0, AROUND_WIDTH_MAX + 1):
        assert conversation.tool("around", passage_id=first["passage_id"], width=bad).json()["field"] == "width"


def test_around_a_missing_passage_says_what_the_thread_holds(conversation):
    first = passage_of(conversation, "Miso.")
    response = conversation.tool("around", passage_id=first["passage_id"].replace("p_0001", "p_0042"))
    assert response.status_code == 404 and "p_0001 to p_0005" in response.json()["message"]
    assert conversation.tool("around", passage_id="nonsense").status_code == 404


def test_latest_is_newest_first(conversation):
    body = conversation.tool("latest", k=3).json()
    assert [p["item_ids"][0] for p in body["passages"]] == ["m6", "m5", "m4"]
    assert len(conversation.tool("latest").json()["passages"]) == 8  # default 10, 8 exist


def test_latest_narrows_to_a_place_and_dates(conversation):
    docs = conversation.tool("latest", place="documents").json()["passages"]
    assert [p["item_ids"] for p in docs] == [["doc1"]]
    assert len(conversation.tool("latest", place="memory").json()["passages"]) == 8
    window = conversation.tool("latest", after="2026-03-01", before="2026-04-01").json()["passages"]
    assert {p["item_ids"][0] for p in window} == {"m1", "m2", "m3", "m4", "m5"}


def test_latest_on_an_empty_place_answers_with_the_places(conversation):
    response = conversation.tool("latest", place="slack")
    assert response.status_code == 404
    assert response.json()["places"] == ["memory", "documents", "messages", "notes"]


def test_latest_checks_its_bounds(conversation):
    for bad in (0, LATEST_K_MAX + 1):
        assert conversation.tool("latest", k=bad).json()["field"] == "k"
    assert conversation.tool("latest", after="last week").json()["field"] == "after"


def test_overview_shows_shape_counts_dates_and_the_index(conversation):
    body = conversation.tool("overview").json()
    assert body["counts"]["items"] == 8 and body["counts"]["passages"] == 8
    assert body["counts"]["passages_by_kind"] == {"messages": 6, "documents": 1, "notes": 1}
    assert body["first_at"].startswith("2026-01-15") and body["last_at"].startswith("2026-04-10")
    assert body["index"].startswith("# Memory of u_1")


def test_search_ranks_the_answer_first(conversation):
    body = conversation.tool("search", query="What is the name of Alice's cat?").json()
    assert body["query"] == "What is the name of Alice's cat?" and body["mode"] == "brief"
    assert body["hits"][0]["item_ids"] == ["m1"]
    assert {"path", "passage_id", "at", "score", "text", "item_ids"} <= set(body["hits"][0])


def test_search_with_after_or_scope_is_a_ranked_list(conversation):
    after = conversation.tool("search", query="marathon", after="2026-04-01").json()
    assert after["mode"] == "ranked" and [h["item_ids"] for h in after["hits"]] == [["m6"]]
    scoped = conversation.tool("search", query="plan", scope="passages/memory/documents").json()
    assert scoped["mode"] == "ranked" and [h["item_ids"] for h in scoped["hits"]] == [["doc1"]]


def test_search_before_a_day_sees_nothing_later(conversation):
    body = conversation.tool("search", query="marathon", before="2026-04-01").json()
    assert body["as_of"] == "2026-04-01"
    assert all(h["at"] < "2026-04-01" for h in body["hits"])


def test_search_holds_at_most_ten_hits(api):
    api.add(*[{"text": f"Note number {i} about gardening", "id": f"n{i}"} for i in range(25)])
    assert len(api.tool("search", query="gardening").json()["hits"]) == 10


def test_search_does_not_serve_expired_items_as_current(api):
    api.add(
        {"text": "Staying at the Hilton in Rome", "id": "trip", "at": "2020-01-01", "expires": "2020-01-10"},
        {"text": "Staying with my sister", "id": "now", "at": "2020-02-01"},
    )
    ids = [h["item_ids"][0] for h in api.tool("search", query="Where am I staying?").json()["hits"]]
    assert "trip" not in ids and "now" in ids
    then = api.tool("search", query="Where am I staying?", before="2020-01-05").json()
    assert [h["item_ids"][0] for h in then["hits"]] == ["trip"]


@pytest.mark.parametrize(
    "tool, arguments, field",
    [
        ("search", {"query": ""}, "query"),
        ("search", {"query": "q" * (TEXT_MAX + 1)}, "query"),
        ("search", {"query": "q", "before": "someday"}, "before"),
        ("search", {"query": "q", "scope": "s" * (NAME_MAX + 1)}, "scope"),
        ("search", {}, "query"),
        ("grep", {"pattern": ""}, "pattern"),
        ("grep", {"pattern": "p" * (TEXT_MAX + 1)}, "pattern"),
        ("read", {"path": "p" * (NAME_MAX + 1)}, "path"),
        ("ls", {"path": "p" * (NAME_MAX + 1)}, "path"),
        ("around", {"passage_id": ""}, "passage_id"),
        ("history", {"subject": ""}, "subject"),
        ("history", {"subject": "Alice", "attribute": "a" * (NAME_MAX + 1)}, "attribute"),
        ("overview", {"anything": 1}, "anything"),
    ],
)
def test_every_read_tool_names_the_field_it_refuses(conversation, tool, arguments, field):
    response = conversation.tool(tool, **arguments)
    assert response.status_code == 400
    assert response.json()["field"] == field


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("search", {"query": "anything"}),
        ("grep", {"pattern": "x"}),
        ("read", {"path": "index.md"}),
        ("ls", {}),
        ("around", {"passage_id": "th_0000000000000000/p_0001"}),
        ("history", {"subject": "Alice"}),
        ("latest", {}),
        ("overview", {}),
    ],
)
def test_an_end_user_with_no_memory_gets_a_clear_404(api, tool, arguments):
    response = api.tool(tool, **arguments)
    assert response.status_code == 404
    assert response.json()["error"] == "no_memory"
    assert "u_1" in response.json()["message"]


def test_a_search_tells_an_emptied_memory_from_one_that_holds_no_match(api):
    api.add({"text": "The blue kettle is on the top shelf", "id": "k"})
    nothing = api.tool("search", query="kettle", before="2001-01-01")  # said later: nothing to find
    assert nothing.status_code == 200 and nothing.json()["hits"] == []
    api.tool("forget", ids=["k"])  # the end user stays, with nothing in their memory
    emptied = api.tool("search", query="kettle")
    assert emptied.status_code == 404 and emptied.json()["error"] == "no_memory"
