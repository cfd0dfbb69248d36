"""The four tools shaped for connector data, over the shipped sample (memory/sample/team.jsonl) loaded by the
loadsample command through memory_add's own path. They have no HTTP route, so their service functions are
called on the loaded Memory; every answer checked here can be checked by hand against the sample."""

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from accounts.models import EndUser
from memory.connectors.how_they_work import memory_how_they_work
from memory.connectors.lessons import memory_lessons
from memory.connectors.next import memory_next
from memory.connectors.recall import memory_recall
from memory.errors import CannotAnswer
from memory.selectors import Memory
from memory.validation import parse_date

SAMPLE = Path(__file__).resolve().parents[2] / "memory" / "sample" / "team.jsonl"


def asked_on(day: str):
    """The day a question is asked as of, as validation hands it to the tool."""
    return parse_date(day, "as_of")


def load(project, account="tom", file=None) -> Memory:
    args = ["loadsample", "--account", account, "--project", project.slug]
    call_command(*args, *(["--file", str(file)] if file else []))
    return Memory(EndUser.objects.get(project=project, external_id=account))


def ask(tool, memory: Memory, **arguments) -> dict:
    """One of the four tools' service functions, in the memory's scope, as tool dispatch runs it."""
    with memory.scoped():
        return tool(memory=memory, **arguments)


def test_the_sample_is_connector_shaped():
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    assert 250 <= len(rows) <= 500
    assert len({r["id"] for r in rows}) == len(rows)
    for r in rows:
        assert set(r) == {"text", "kind", "id", "at", "author", "session", "metadata"} and r["kind"] == "message"
        assert {"source", "surface", "action", "thread"} <= set(r["metadata"])
    assert {r["metadata"]["source"] for r in rows} == {"slack", "github", "pagerduty"}


def test_loadsample_needs_a_project_when_there_are_several(project, other_project):
    with pytest.raises(CommandError, match="--project"):
        call_command("loadsample", "--account", "tom")


def test_the_tools_answer_what_the_sample_holds(project):
    memory = load(project)
    with memory.scoped():
        assert memory.items().count() == len(SAMPLE.read_text().splitlines())
        assert not memory.items().filter(read_at__isnull=True).exists()
    call_command("loadsample", "--account", "tom")  # the only project; loading again changes nothing
    with memory.scoped():
        assert memory.items().filter(version__gt=1).count() == 0

    # A known lesson: INC-101's postmortem, a failure, answered with its passage.
    lessons = ask(memory_lessons, memory, task="deploy the web app on a Friday afternoon")["lessons"]
    first = lessons[0]
    assert "we now deploy before 3pm" in first["lesson"] and first["outcome"] == "failure"
    assert any("Postmortem INC-101" in p["text"] for p in first["passages"])
    assert all(set(p) == {"path", "passage_id", "at", "text"} for p in first["passages"])
    sdk = ask(memory_lessons, memory, task="upgrade the Stripe SDK")["lessons"][0]
    assert sdk["lesson"] == "Next time upgrade one SDK at a time." and sdk["outcome"] == "failure"
    with pytest.raises(CannotAnswer) as missing:
        ask(memory_lessons, memory, task="bake sourdough bread at home")
    assert missing.value.error == "no_lessons"

    # A known run-up: Tom tests, asks for review and merges before every deploy.
    tom = ask(memory_how_they_work, memory, who="Tom Becker")
    deploy = next(r for r in tom["run_ups"] if r["action"] == "deploy")
    assert deploy["steps"] == ["test", "review_request", "merge"] and deploy["times"] == 12 and deploy["share"] == 1.0
    assert [e["action"] for e in deploy["example"]] == ["test", "review_request", "merge", "deploy"]
    assert tom["surface"] == "#payments" and tom["voice"]["register"] == "casual"
    assert {"hey", "yo"} <= {g["text"] for g in tom["voice"]["greetings"]}
    sara = ask(memory_how_they_work, memory, who="sara")
    assert sara["who"] == "Sara Kim" and sara["voice"]["register"] == "formal"
    assert {"Thanks, Sara", "Best, Sara"} == {s["text"] for s in sara["voice"]["sign_offs"]}
    assert ask(memory_how_they_work, memory, who="Tom", surface="deploys")["surface"] == "#deploys"
    with pytest.raises(CannotAnswer) as unknown:
        ask(memory_how_they_work, memory, who="Tomas Beck")
    assert unknown.value.error == "unknown_person" and unknown.value.details["nearest"][0] == "Tom Becker"

    # A known next step: the sample ends with Tom's test, review request and merge, so he deploys next.
    nxt = ask(memory_next, memory)  # the memory's owner: end user "tom" is Tom Becker
    assert nxt["who"] == "Tom Becker"
    assert [r["action"] for r in nxt["recent"]][-3:] == ["test", "review_request", "merge"]
    guess = nxt["guesses"][0]
    assert (
        guess
        == {
            "action": "deploy",
            "probability": guess["probability"],
            "backed_off": False,
            "context": ["review_request", "merge"],
        }
        and guess["probability"] > 0.8
    )
    assert len(nxt["guesses"]) == 3 and any(g["backed_off"] and g["context"] == [] for g in nxt["guesses"])
    assert sum(g["probability"] for g in ask(memory_next, memory, who="Tom", top=10)["guesses"]) <= 1.001

    # memory_recall: worked-out lines with their inputs, and enough low for what memory cannot answer.
    rollback = ask(memory_recall, memory, question="When did Leo roll back acme/web?", as_of=asked_on("2025-04-12"))
    days = next(w for w in rollback["worked_out"] if w["kind"] == "days_before")
    assert days["value"] == 22 and days["as_of"] == "2025-04-12"
    assert days["inputs"][0]["passage_id"] == next(
        r["passage_id"] for r in rollback["records"] if r.get("action") == "rollback"
    )
    assert rollback["enough"] > 0.6
    for section in ("Records", "Worked out", "Passages"):
        assert f"\n{section}\n" in rollback["text"]
    count = ask(memory_recall, memory, question="How many times did Tom Becker deploy?", as_of=asked_on("2025-04-12"))
    assert next(w for w in count["worked_out"] if w["kind"] == "count")["value"] == 12
    earlier = ask(memory_recall, memory, question="How many times did Tom Becker deploy?", as_of=asked_on("2025-03-15"))
    assert next(w for w in earlier["worked_out"] if w["kind"] == "count")["value"] == 4
    assert all(p["at"] < "2025-03-15" for p in earlier["passages"])  # nothing said after as_of
    order = ask(memory_recall, memory, question="Which came first, INC-101 or INC-102?")
    line = next(w for w in order["worked_out"] if w["kind"] == "order")
    assert line["line"].startswith("first INC-101") and line["days_apart"] >= 0
    unanswerable = ask(memory_recall, memory, question="What is the capital of Peru?")
    assert unanswerable["enough"] < 0.3 < rollback["enough"]
    assert "model" not in unanswerable  # no model configured: deterministic


def test_recall_makes_one_model_call_and_up_to_six_more_with_deep(project, fake_llm, tmp_path):
    rows = SAMPLE.read_text().splitlines()
    subset = tmp_path / "subset.jsonl"  # the first two weeks and the incidents: quicker to read than all
    subset.write_text("\n".join(r for i, r in enumerate(rows) if i < 80 or "INC-10" in r) + "\n")
    memory = load(project, file=subset)
    sure = json.dumps({"answer": "Leo rolled back acme/web on 21 March [x].", "enough": 0.9, "follow": []})
    fake_llm.handler = lambda body: sure
    fake_llm.requests.clear()  # the background read made none (no extraction model call is asserted here)
    answer = ask(memory_recall, memory, question="When did Leo roll back acme/web?", as_of=asked_on("2025-04-12"))
    assert len(fake_llm.requests) == 1 and answer["enough"] == 0.9
    assert answer["model"]["calls"] == 1 and answer["answer"].startswith("Leo rolled back")
    assert "Answer: Leo rolled back" in answer["text"]
    user = fake_llm.messages()["user"]
    assert "<passage id=" in user and "<question>When did Leo roll back acme/web?</question>" in user

    fake_llm.requests.clear()
    ask(memory_recall, memory, question="When did Leo roll back acme/web?", deep=True)
    assert len(fake_llm.requests) == 1  # deep, but memory is not thin: no more calls

    # more names to follow than deep may take, so the bound, not the memory, stops it
    follow = ["Priya Shah", "INC-103", "Tom Becker", "Maya Patel", "Leo Martins", "Sara Kim", "INC-101", "INC-102"]
    thin = json.dumps({"answer": "Memory does not say.", "enough": 0.1, "follow": follow})
    fake_llm.handler = lambda body: thin
    fake_llm.requests.clear()
    deep = ask(memory_recall, memory, question="Who renewed the certificate?", deep=True)
    assert len(fake_llm.requests) == 7 and deep["model"]["calls"] == 7  # one, then six following names
    assert len(deep["passages"]) > 10  # each follow kept passages the first search had not
    fake_llm.requests.clear()
    ask(memory_recall, memory, question="Who renewed the certificate?")
    assert len(fake_llm.requests) == 1  # without deep, one call however thin
