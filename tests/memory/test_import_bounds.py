"""An import is all or nothing, and no byte of a file answers 500: every value a line brings is checked in the
first pass against what its column holds (after case folding and the secret gate's redaction too), facts
that claim the impossible are refused by line and field, up to 100 bad lines are named, a gzip bomb is
refused while it is read, and a failure in the store pass is undone, the end user it made included."""

import gzip
import json

import pytest

from accounts.auth import Context
from accounts.models import Access, EndUser, SecretPolicy
from memory.limits import (
    IMPORT_RATIO_MAX,
    IMPORT_REFUSED_LINES,
    ITEM_METADATA_MAX_BYTES,
    PASSAGE_PLACE_MAX,
    VERSION_MAX,
)
from memory.models import ImportJob, Item
from memory.portability import jobs
from memory.scope import scoped
from tests.conftest import Api
from twin.celery import app as celery_app

PG_INTEGER_MAX = 2_147_483_647  # what a PostgreSQL integer column holds
GOOD_LINES = 1_000  # good lines before the bad one: none of them may be stored


def header(items: int) -> dict:
    return {"format": "twin-memory-export", "version": 1, "items": items}


def note(n: int, **line) -> dict:
    return {"item": {"id": f"n{n}", "text": f"Note {n}.", "at": "2024-01-01"}, **line}


def fact(**fields) -> dict:
    return {
        "subject": "u_1",
        "attribute": "home_city",
        "value": "Lisbon",
        "kind": "value",
        "valid_from": "2024-01-01",
        "stated_at": "2024-01-01",
        "recorded_at": "2024-01-02",
        "source": {"item": "n0"},
        **fields,
    }


def body(lines: list[dict]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in [header(len(lines)), *lines])


def import_(api: Api, data: bytes, **headers):
    return api.client.post(
        "/v1/memory/import", data=data, content_type="application/x-ndjson", headers=api.headers(**headers)
    )


def refused(api: Api, data: bytes) -> dict:
    response = import_(api, data)
    assert response.status_code == 400, response.content
    return response.json()


def nothing_stored(api: Api, project) -> None:
    assert api.tool("overview").status_code == 404
    assert not EndUser.objects.filter(project=project, external_id=api.account).exists(), "no end user made"


def test_a_version_past_what_its_column_can_grow_to_is_refused_after_a_thousand_good_lines(api, project):
    lines = [note(n) for n in range(GOOD_LINES)] + [note(GOOD_LINES, version=PG_INTEGER_MAX + 1)]
    answer = refused(api, body(lines))
    assert (answer["line"], answer["field"], answer["bound"]) == (GOOD_LINES + 2, "version", VERSION_MAX)
    nothing_stored(api, project)
    for version in (PG_INTEGER_MAX, VERSION_MAX + 1):  # its next edit could not be stored
        assert refused(api, body([note(0, version=version)]))["field"] == "version"
    assert import_(api, body([note(0, version=VERSION_MAX)])).status_code == 200
    edited = api.add({"id": "n0", "text": "Edited after its import."})
    assert edited["items"][0]["status"] == "edited", "an item imported at the bound can still be edited"
    assert api.tool("correct", id="n0", text="Corrected too.").json()["version"] == VERSION_MAX + 2


def test_a_facts_passage_past_its_bound_is_refused(api, project):
    lines = [note(0, facts=[fact(source={"item": "n0", "passage": PG_INTEGER_MAX + 1})])]
    answer = refused(api, body(lines))
    assert (answer["field"], answer["bound"]) == ("facts[0].source.passage", PASSAGE_PLACE_MAX)
    nothing_stored(api, project)


def test_a_subject_whose_case_folded_form_outgrows_its_column_is_refused(api, project):
    subject = "\ufb03" * 512  # "ﬃ", one character, folds to "ffi": 1,536 characters
    answer = refused(api, body([note(0, facts=[fact(subject=subject)])]))
    assert (answer["field"], answer["bound"]) == ("facts[0].subject", 512)
    assert "case folded" in answer["message"]
    nothing_stored(api, project)


def test_an_attribute_that_grows_past_its_column_once_redacted_is_refused(api, project):
    project.secret_policy = SecretPolicy.REDACT
    project.save()
    attribute = "a" * 40 + " AKIAUJZDE8GXD6NCF10E"  # 61 characters; "[redacted: AWS Access Key]" is 26
    answer = refused(api, body([note(0, facts=[fact(attribute=attribute)])]))
    assert (answer["field"], answer["bound"]) == ("facts[0].attribute", 64)
    assert "redacted" in answer["message"] and "AKIA" not in json.dumps(answer)
    nothing_stored(api, project)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"valid_from": "2024-05-01", "valid_to": "2024-04-01"}, "valid_to"),
        ({"retracted_at": "2999-01-01", "retraction": "edited"}, "retracted_at"),
        ({"stated_at": "9999-01-01"}, "stated_at"),
        ({"recorded_at": "9999-12-31"}, "recorded_at"),
    ],
)
def test_a_fact_claiming_what_cannot_have_happened_is_refused(api, project, change, field):
    answer = refused(api, body([note(0, facts=[fact(**change)])]))
    assert (answer["line"], answer["field"]) == (2, f"facts[0].{field}")
    nothing_stored(api, project)


def test_a_versions_metadata_has_an_items_bound(api, project):
    metadata = {"notes": "x" * ITEM_METADATA_MAX_BYTES}
    version = {"version": 1, "text": "Before.", "replaced_at": "2024-01-02", "fields": {"metadata": metadata}}
    answer = refused(api, body([note(0, version=2, versions=[version])]))
    assert (answer["field"], answer["bound"]) == ("versions[0].fields.metadata", ITEM_METADATA_MAX_BYTES)
    nothing_stored(api, project)


def test_a_refusal_names_every_bad_line_up_to_a_hundred(api, project):
    lines = [note(n) for n in range(10)]
    for n in (2, 5, 7):
        lines[n]["item"].pop("text")
    lines[8]["version"] = 0
    answer = refused(api, body(lines))
    assert [(entry["line"], entry["field"]) for entry in answer["lines"]] == [
        (4, "item.text"),
        (7, "item.text"),
        (9, "item.text"),
        (10, "version"),
    ]
    assert (answer["line"], answer["field"]) == (4, "item.text") and "more_lines" not in answer

    many = [{"item": {"id": f"bad{n}"}} for n in range(IMPORT_REFUSED_LINES + 20)]
    answer = refused(api, body(many))
    assert len(answer["lines"]) == IMPORT_REFUSED_LINES and answer["more_lines"] is True
    assert answer["lines"][-1]["line"] == IMPORT_REFUSED_LINES + 1
    nothing_stored(api, project)


def test_a_gzip_bomb_is_refused_while_it_is_read(api, project):
    bomb = gzip.compress(json.dumps(header(0)).encode() + b"\n" + b"\n" * 20 * 1024**2)
    answer = refused(api, bomb)
    assert (answer["field"], answer["bound"]) == ("body", IMPORT_RATIO_MAX)
    nothing_stored(api, project)


@pytest.fixture
def unread(api):
    """Items stay unread: their read goes to this run's queue in Redis and waits there."""
    celery_app.conf.task_always_eager = False
    try:
        yield
    finally:
        celery_app.conf.task_always_eager = True


def test_a_failure_while_storing_is_undone_with_the_end_user_it_made(api, project, tmp_path, unread):
    """The file changes under the job as its store pass starts (as a failing disk would change it): the pass
    stores its first batch, then fails at line 1,202, and what it had stored goes, with the end user it made."""
    path = tmp_path / "memory.jsonl"
    path.write_bytes(body([note(n) for n in range(1_500)]))
    spoiled = path.read_bytes().index(b'"n1200"')

    def spoil(job: ImportJob) -> None:
        if job.state == ImportJob.STORING and not job.stored:
            with open(path, "r+b") as file:
                file.seek(spoiled)
                file.write(b"\x00")

    context = Context(project=project, account=api.account, access=Access.WRITE)
    job = jobs.import_job_create(context=context, file=str(path), surface=jobs.COMMAND)
    ended = jobs.import_job_run(project.pk, job.pk, progress=spoil)
    assert ended is not None, "the job was this runner's"
    assert ended.state == ImportJob.FAILED and jobs.ended_with(ended)["error"] == "import_failed", ended.answer
    assert ended.stored == 1_000, "a batch was stored before the failure"
    nothing_stored(api, project)
    with scoped(project.pk):
        assert not Item.objects.exists() and ImportJob.objects.get(pk=job.pk).added == []
    assert path.exists(), "a file outside the spool is never deleted"
