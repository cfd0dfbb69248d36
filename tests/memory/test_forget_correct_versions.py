"""The HTTP-only routes: forget, correct, versions."""

from memory.models import Item, Passage, Thread
from memory.selectors import scoped


def seed(api):
    api.add(
        {"text": "Lives in Porto", "id": "home"},
        {"text": "Cat is Miso", "id": "cat", "kind": "message", "session": "chat"},
        {"text": "Dog is Rex", "id": "dog", "kind": "message", "session": "chat"},
    )


def test_forget_by_id_erases_the_item_and_what_came_from_it(api, project):
    seed(api)
    answer = api.tool("forget", ids=["home"]).json()
    assert answer == {"forgotten": 1, "ids": ["home"], "erased": {"items": 1, "versions": 0, "passages": 1, "facts": 0}}
    with scoped(project.pk):
        assert not Item.objects.filter(external_id="home").exists()
    assert api.tool("grep", pattern="Porto").json()["found"] == 0
    assert "Porto" not in api.tool("read", path="index.md").json()["text"]
    assert api.tool("grep", pattern="Miso").json()["found"] == 1


def test_forget_by_path_erases_a_file_or_a_directory(api):
    seed(api)
    cat = api.tool("grep", pattern="Miso").json()["hits"][0]
    assert api.tool("forget", path=cat["path"]).json()["ids"] == ["cat"]
    thread_dir = cat["path"].rsplit("/", 1)[0] + "/"
    assert api.tool("forget", path=thread_dir).json()["ids"] == ["dog"]
    assert api.tool("grep", pattern="Rex").json()["found"] == 0
    assert api.tool("forget", path="passages/memory/").json()["ids"] == ["home"]


def test_forget_all_erases_the_end_user(api, project):
    seed(api)
    assert api.tool("forget", all=True).json()["forgotten"] == 3
    with scoped(project.pk):
        assert not Passage.objects.exists() and not Thread.objects.exists()
    assert api.tool("overview").status_code == 404


def test_forget_needs_something_to_forget_and_a_write_key(api, read_api, project):
    seed(api)
    response = api.tool("forget")
    assert response.status_code == 400 and response.json()["field"] == "ids"
    assert api.tool("forget", ids=["nope"]).status_code == 404
    assert read_api.tool("forget", all=True).status_code == 403
    with scoped(project.pk):
        assert Item.objects.count() == 3


def test_correct_fixes_the_text_and_keeps_the_old_as_a_version(api):
    seed(api)
    answer = api.tool("correct", id="home", text="Lives in Braga").json()
    assert answer == {"id": "home", "status": "edited", "version": 2}
    assert api.tool("grep", pattern="Braga").json()["found"] == 1
    assert api.tool("grep", pattern="Porto").json()["found"] == 0
    versions = api.tool("versions", id="home").json()
    assert versions["versions"][0]["text"] == "Lives in Porto" and versions["versions"][0]["version"] == 1
    assert api.tool("correct", id="home", text="Lives in Braga").json()["status"] == "unchanged"


def test_correct_and_versions_refuse_bad_input(api, read_api):
    seed(api)
    assert api.tool("correct", id="home", text="").json()["field"] == "text"
    assert api.tool("correct", id="ghost", text="x").status_code == 404
    assert read_api.tool("correct", id="home", text="x").status_code == 403
    assert api.tool("versions").json()["field"] == "id"
    assert read_api.tool("versions", id="home").status_code == 200
