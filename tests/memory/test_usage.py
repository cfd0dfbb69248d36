"""Every tool call is counted once, by day, tool, credential and surface, with the last errors kept."""

from memory.models import RecentError, UsageDay
from memory.selectors import scoped


def rows(project):
    with scoped(project.pk):
        return {(u.tool, u.credential, u.surface): u for u in UsageDay.objects.all()}


def test_calls_are_counted_per_tool_credential_and_surface(api, write_key, project):
    api.add({"text": "one", "id": "a"}, {"text": "two", "id": "b"})
    api.add({"text": "one", "id": "a"})  # unchanged: a request, no item added
    api.tool("grep", pattern="one")
    api.call("memory_grep", pattern="two")
    counted = rows(project)
    prefix = write_key[0].prefix
    assert counted[("memory_add", prefix, "http")].requests == 2
    assert counted[("memory_add", prefix, "http")].items_added == 2
    assert counted[("memory_grep", prefix, "http")].requests == 1
    assert counted[("memory_grep", prefix, "mcp")].requests == 1


def test_errors_are_counted_and_the_last_ones_kept(api, write_key, project):
    api.tool("overview")  # no memory yet
    api.tool("grep", pattern="x", limit=99)
    counted = rows(project)
    assert counted[("memory_overview", write_key[0].prefix, "http")].errors == 1
    with scoped(project.pk):
        assert {e.error for e in RecentError.objects.all()} == {"no_memory", "invalid_arguments"}
        assert "limit" in RecentError.objects.get(error="invalid_arguments").message


def test_model_calls_are_counted(api, write_key, project, fake_llm):
    api.add({"text": "I live in Porto", "id": "a", "author": "Ana"})
    fake_llm.reply("Ana lives in Porto.")
    api.tool("search", query="Where does Ana live?")
    assert rows(project)[("memory_search", write_key[0].prefix, "http")].model_calls == 1


def test_one_project_never_sees_anothers_usage(api, charlie_api, project, other_project):
    api.tool("overview")
    charlie_api.tool("overview")
    for seen, unseen in ((project, other_project), (other_project, project)):
        with scoped(seen.pk):
            assert UsageDay.objects.filter(project=seen).count() == 1
            assert UsageDay.objects.filter(project=unseen).count() == 0


def test_a_refusal_is_counted_alike_over_http_and_mcp(read_api, read_key, project):
    read_api.tool("add", items=[{"text": "x"}])
    read_api.call("memory_add", items=[{"text": "x"}])
    counted = rows(project)
    for surface in ("http", "mcp"):
        assert counted[("memory_add", read_key[0].prefix, surface)].errors == 1, surface
    with scoped(project.pk):
        kept = list(RecentError.objects.filter(error="insufficient_scope"))
    assert sorted(e.surface for e in kept) == ["http", "mcp"]
    assert len({e.message for e in kept}) == 1, "the same words on both surfaces"
