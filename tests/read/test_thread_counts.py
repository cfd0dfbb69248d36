"""index.md, the overview and the console read each thread's kept count and first and last moments
(Memory.recount_threads) rather than every passage: they must say what the passages say, as passages are
read, edited away and forgotten."""

from django.db.models import Count, Max, Min

from memory.models import Passage
from memory.paths import PLURAL
from memory.selectors import scoped

LONG = " ".join(f"Paragraph {n} of the plan says the launch moves step {n} forward by a week." for n in range(90))


def held(project) -> dict:
    """What the passages themselves say: counts by kind, threads, first and last moments."""
    with scoped(project.pk):
        passages = Passage.objects.filter(end_user__external_id="u_1")
        by_kind = {PLURAL[r["kind"]]: r["n"] for r in passages.values("kind").annotate(n=Count("id"))}
        span = passages.aggregate(first=Min("at"), last=Max("at"), threads=Count("thread", distinct=True))
    return {
        "passages": sum(by_kind.values()),
        "passages_by_kind": by_kind,
        "threads": span["threads"],
        "first": span["first"].date().isoformat() if span["first"] else None,
        "last": span["last"].date().isoformat() if span["last"] else None,
    }


def said(api) -> dict:
    """What the overview and index.md say."""
    body = api.tool("overview").json()
    index = api.tool("read", path="index.md").json()["text"]
    counts = body["counts"]
    shown = {
        "passages": counts["passages"],
        "passages_by_kind": counts["passages_by_kind"],
        "threads": counts["threads"],
        "first": body["first_at"][:10],
        "last": body["last_at"][:10],
    }
    assert (
        f"{counts['items']} items in {counts['threads']} threads, {counts['passages']} passages, "
        f"from {shown['first']} to {shown['last']}."
    ) in index
    return shown


def test_the_counts_follow_the_passages_through_reads_edits_and_forgets(api, project):
    api.add(
        {"text": "We met at the cafe.", "id": "m1", "kind": "message", "session": "s1", "at": "2026-01-10"},
        {"text": "Then we walked the dog.", "id": "m2", "kind": "message", "session": "s1", "at": "2026-02-11"},
        {"text": "Buy milk.", "id": "n1", "kind": "note", "at": "2026-03-12"},
        {"text": LONG, "id": "plan", "kind": "document", "title": "Plan", "at": "2026-04-13"},
    )
    first = held(project)
    assert first["passages_by_kind"]["documents"] > 1, "the document is cut into several passages"
    assert said(api) == first
    # An edit cuts the document into one passage and moves it in time.
    api.add({"text": "The plan is short now.", "id": "plan", "kind": "document", "title": "Plan", "at": "2026-05-14"})
    edited = held(project)
    assert edited["passages_by_kind"]["documents"] == 1 and edited["last"] == "2026-05-14"
    assert said(api) == edited
    # Forgetting the session's earliest turn moves the memory's first moment and its thread's count.
    assert api.tool("forget", ids=["m1"]).json()["forgotten"] == 1
    forgotten = held(project)
    assert forgotten["first"] == "2026-02-11" and forgotten["passages_by_kind"]["messages"] == 1
    assert said(api) == forgotten
    index = api.tool("read", path="index.md").json()["text"]
    assert "1 passages, 2026-02-11." in index, "the session's thread: one turn left, of 11 February"
    # Forgetting the note empties its thread: it is no longer counted or listed.
    api.tool("forget", ids=["n1"])
    assert said(api) == held(project) and "notes" not in held(project)["passages_by_kind"]
    assert "passages/memory/notes/" not in api.tool("read", path="index.md").json()["text"]
